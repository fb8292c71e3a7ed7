// Command tracedigest prints a digest of the whole trace of many runs: every
// slate S_t and the bits of every HV(S_t). A change that must not change
// any result (a speedup of a policy) must leave every line the same; run
// it on the code before and after and compare the outputs with diff or
// cmp. The lock comparison (internal/lockdiff) sees a run's outputs, which
// hold HV(S_t) only; this sees the slates themselves.
//
//	go run ./internal/tracedigest [-settings d2,d3,d4,d5] [-seeds 0,1] [-j 2] > digests.txt
//
// The runs are those of params.yaml's paper protocol at each setting (n, k,
// T, σ), every geometry, every algorithm at every η of its grid (once for
// those without η) with its fixed parameters, on the instance of instance
// seed 0 (the default protocol's), for each environment seed. Each line is
// "setting geometry algorithm eta seed digest"; the last line digests all.
//
// It reads the embedded params.yaml only for the settings, the grid and
// the fixed parameters, and runs algos.Run directly: no store, no pipeline.
package main

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"thv/algos"
	_ "thv/algos/all"
	"thv/envs"
	"thv/protocol/config"
)

type job struct {
	setting config.Setting
	geom    string
	algo    config.AlgoConfig
	eta     float64
	seed    uint64
	inst    *envs.Instance
	bench   algos.Benchmarks
	line    string
}

func main() {
	settings := flag.String("settings", "d2,d3,d4,d5", "the settings of params.yaml to run, comma-separated")
	seeds := flag.String("seeds", "0", "environment seeds, comma-separated")
	algoList := flag.String("algos", "", "only these algorithms, comma-separated (default: all of params.yaml)")
	jobs := flag.Int("j", 2, "runs at once")
	flag.Parse()
	if err := run(*settings, *seeds, *algoList, *jobs); err != nil {
		fmt.Fprintln(os.Stderr, "tracedigest:", err)
		os.Exit(2)
	}
}

func run(settingList, seedList, algoList string, jobs int) error {
	cfg, err := config.Load(config.LoadOptions{})
	if err != nil {
		return err
	}
	var seeds []uint64
	for _, s := range strings.Split(seedList, ",") {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return fmt.Errorf("-seeds: %w", err)
		}
		seeds = append(seeds, v)
	}
	var only []string
	if algoList != "" {
		only = strings.Split(algoList, ",")
	}
	var all []*job
	for _, name := range strings.Split(settingList, ",") {
		s, ok := cfg.Settings[name]
		if !ok {
			return fmt.Errorf("-settings: no setting %q in params.yaml", name)
		}
		s.Name = name
		ref := slices.Repeat([]float64{cfg.Reference}, s.D)
		for _, g := range cfg.Geometries {
			inst, err := envs.Generate(envs.Geometry(g), s.D, s.N, cfg.Instances.Seed)
			if err != nil {
				return err
			}
			bench := algos.ComputeBenchmarks(inst, s.K, ref)
			for _, a := range cfg.Algorithms {
				if only != nil && !slices.Contains(only, a.Name) {
					continue
				}
				etas := a.Eta
				if len(etas) == 0 {
					etas = []float64{0}
				}
				for _, eta := range etas {
					for _, seed := range seeds {
						all = append(all, &job{setting: s, geom: g, algo: a, eta: eta, seed: seed, inst: inst, bench: bench})
					}
				}
			}
		}
	}
	work := make(chan *job)
	errs := make(chan error, jobs)
	var wg sync.WaitGroup
	for range max(1, jobs) {
		wg.Go(func() {
			for j := range work {
				if err := j.do(cfg); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for _, j := range all {
		work <- j
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
	}
	total := sha256.New()
	for _, j := range all {
		fmt.Println(j.line)
		fmt.Fprintln(total, j.line)
	}
	fmt.Printf("all %d runs %s\n", len(all), hex.EncodeToString(total.Sum(nil)))
	return nil
}

func (j *job) do(cfg *config.Config) error {
	s := j.setting
	tr, _, err := algos.Run(algos.RunSpec{
		Algo: j.algo.Name, Eta: j.eta, Params: j.algo.Params, Instance: j.inst,
		K: s.K, T: s.T, Sigma: s.Sigma, Seed: j.seed, MinPulls: cfg.MinPullsOf(j.algo),
		InitTies: cfg.InitTies, Ref: slices.Repeat([]float64{cfg.Reference}, s.D),
		Window: cfg.Metrics.HVWindow, EtaScale: cfg.EtaScaleOf(j.algo),
	}, j.bench)
	if err != nil {
		return fmt.Errorf("%s %s %s η=%v seed %d: %w", s.Name, j.geom, j.algo.Name, j.eta, j.seed, err)
	}
	h := sha256.New()
	var b [8]byte
	for t, slate := range tr.Slates {
		for _, i := range slate {
			binary.LittleEndian.PutUint64(b[:], uint64(i))
			h.Write(b[:])
		}
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(tr.HV[t]))
		h.Write(b[:])
	}
	j.line = fmt.Sprintf("%s %s %s %v %d %s", s.Name, j.geom, j.algo.Name, j.eta, j.seed, hex.EncodeToString(h.Sum(nil)))
	return nil
}
