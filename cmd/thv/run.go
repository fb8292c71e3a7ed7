package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/spf13/cobra"

	"thv/algos"
	"thv/envs"
	"thv/pipeline/userfile"
	"thv/stages/protocol"
)

type runFlags struct {
	d         int
	geometry  string
	algo      string
	eta       float64
	seed      uint64
	n, k, T   int
	sigma     float64
	instance  string
	jsonOut   bool
	traj      bool
	params    string
	profile   string
	paramSets []string
}

func newRunCommand() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run --d D --geometry G --algo A [--eta E] --seed S",
		Short: "Simulate one bandit run and print its metrics",
		Long: `Simulate one run of one algorithm on one of the paper's instances (or on
a CSV instance given with --instance) and print HV_last100, the benchmarks
V* and HV(G*), and the regrets.

n, k, T and sigma default to the paper's setting for d in params.yaml
(embedded; --params to read another file); flags override them. A flag
given with a value out of range (--k 0, --T -5, --sigma nan, --eta inf,
--k above n) is an error, never replaced by the default. d, n, k, T and
sigma have the ceilings of params.yaml's settings (d ≤ 10, n ≤ 200, k ≤ 8,
T ≤ 100000, σ ≤ 10: docs/reliability.md, "Protocol limits").`,
		Example: `  thv run --d 3 --geometry concave --algo THV-UCB --eta 0.01 --seed 0
  thv run --d 5 --geometry linear --algo ParetoTS --seed 3 --json
  thv run --instance arms.csv --k 4 --T 2000 --sigma 0.05 --algo THV-UCB --eta 0.1 --seed 0`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runOnce(cmd, f) },
	}
	fl := cmd.Flags()
	fl.IntVar(&f.d, "d", 0, "number of objectives: selects the paper's setting in params.yaml")
	fl.StringVar(&f.geometry, "geometry", "", "front geometry: clusters, concave, convex or linear")
	fl.StringVar(&f.algo, "algo", "", "algorithm name as the paper prints it (see thv algos)")
	fl.Float64Var(&f.eta, "eta", 0, "confidence parameter η (required for algorithms that have η)")
	fl.Uint64Var(&f.seed, "seed", 0, "environment seed (instance, noise and policy randomness)")
	fl.IntVar(&f.n, "n", 0, "number of arms (default: the setting's)")
	fl.IntVar(&f.k, "k", 0, "slate size (default: the setting's)")
	fl.IntVar(&f.T, "T", 0, "horizon in rounds (default: the setting's)")
	fl.Float64Var(&f.sigma, "sigma", 0, "noise level σ ≥ 0 (default: the setting's)")
	fl.StringVar(&f.instance, "instance", "", "CSV file of arm means (one arm per row) instead of a synthetic instance")
	fl.BoolVar(&f.jsonOut, "json", false, "print one JSON object")
	fl.BoolVar(&f.traj, "trajectory", false, "also print the run's trajectory, HV(S_t) on the true means for t = 1..T (a \"trajectory\" list with --json)")
	fl.StringVar(&f.params, "params", "", "params.yaml to read settings from (default: the embedded one)")
	fl.StringVar(&f.profile, "profile", "paper", "params profile")
	fl.StringArrayVar(&f.paramSets, "set", nil, "override a params key, e.g. --set settings.d3.T=300")
	return cmd
}

// maxInstanceBytes bounds an --instance file: MaxN rows of MaxD numbers
// fit many times over.
const maxInstanceBytes = 1 << 20

// checkRunFlags refuses a flag given with a value out of its range: a flag
// not given takes the setting's value, but one given as 0, a negative, NaN
// or an infinity is an error naming the flag and the value, never a silent
// fall-back to the default. The ceilings are the protocol's (the same
// limits as params.yaml's settings, stages/protocol/limits.go).
func checkRunFlags(cmd *cobra.Command, f runFlags) error {
	changed := cmd.Flags().Changed
	ints := []struct {
		flag    string
		v       int
		min     int
		what    string
		ceiling protocol.Ceiling
	}{
		{"d", f.d, 2, "number of objectives", protocol.CeilingD},
		{"n", f.n, 1, "number of arms", protocol.CeilingN},
		{"k", f.k, 1, "slate size", protocol.CeilingK},
		{"T", f.T, 1, "horizon", protocol.CeilingT},
	}
	for _, c := range ints {
		if !changed(c.flag) {
			continue
		}
		if c.flag == "d" && c.v < 2 {
			return fmt.Errorf("--d %d: need at least 2 objectives", c.v)
		}
		if c.v < c.min {
			return fmt.Errorf("--%s %d: %s must be between %d and %d", c.flag, c.v, c.what, c.min, c.ceiling.Max)
		}
		if err := c.ceiling.Check("--"+c.flag, c.v); err != nil {
			return err
		}
	}
	if changed("n") && changed("k") && f.k > f.n {
		return fmt.Errorf("--k %d: slate size must be between 1 and n = %d (--n)", f.k, f.n)
	}
	if changed("sigma") {
		if err := protocol.CheckSigma("--sigma", f.sigma); err != nil {
			return err
		}
	}
	if changed("eta") && (!(f.eta > 0) || math.IsInf(f.eta, 1)) {
		return fmt.Errorf("--eta %v: η must be finite and > 0", f.eta)
	}
	if f.instance != "" {
		for _, flag := range []string{"d", "n", "geometry"} {
			if changed(flag) {
				return fmt.Errorf("--%s: cannot be combined with --instance (the instance's file gives d and n)", flag)
			}
		}
	}
	return nil
}

// runResult is the JSON shape of `thv run --json`.
type runResult struct {
	Algo           string  `json:"algo"`
	Eta            float64 `json:"eta"`
	D              int     `json:"d"`
	N              int     `json:"n"`
	K              int     `json:"k"`
	T              int     `json:"T"`
	Sigma          float64 `json:"sigma"`
	Geometry       string  `json:"geometry"`
	Seed           uint64  `json:"seed"`
	HVLast100      float64 `json:"hv_last100"`
	VStar          float64 `json:"v_star"`
	HVGreedy       float64 `json:"hv_greedy"`
	RegretAlpha    float64 `json:"regret_alpha"`
	RegretAlphaPos float64 `json:"regret_alpha_pos"`
	RegretExact    float64 `json:"regret_exact"`
	SStar          []int   `json:"s_star"`
	GStar          []int   `json:"g_star"`
	Seconds        float64 `json:"seconds"` // wall time of the simulation only
	// Trajectory is HV(S_t) for t = 1..T, with --trajectory.
	Trajectory []float64 `json:"trajectory,omitempty"`
}

func runOnce(cmd *cobra.Command, f runFlags) error {
	if f.algo == "" {
		return fmt.Errorf("--algo is required (see thv algos)")
	}
	spec, err := algos.Lookup(f.algo)
	if err != nil {
		return err
	}
	if spec.UsesEta && !cmd.Flags().Changed("eta") {
		return fmt.Errorf("%s has a confidence parameter: give --eta (the paper's grid: 0.01, 0.1, 0.3, 1.0)", spec.Name)
	}
	if err := checkRunFlags(cmd, f); err != nil {
		return err
	}
	cfg, err := protocol.LoadConfig(protocol.LoadOptions{ParamsFile: f.params, Profile: f.profile, Set: f.paramSets})
	if err != nil {
		return err
	}
	changed := cmd.Flags().Changed
	var inst *envs.Instance
	var set protocol.Setting
	geometry := f.geometry
	if f.instance != "" {
		file, err := userfile.Open(f.instance, maxInstanceBytes)
		if err != nil {
			return fmt.Errorf("--instance: %w", err)
		}
		inst, err = envs.LoadCSV(file)
		file.Close()
		if errors.Is(err, userfile.ErrTooLarge) { // it grew after the check
			return fmt.Errorf("--instance: %s: larger than the limit of %s", f.instance, userfile.Size(maxInstanceBytes))
		}
		if err != nil {
			return fmt.Errorf("%s: %w", f.instance, err)
		}
		if err := protocol.CeilingD.Check(f.instance+": d", inst.D()); err != nil {
			return err
		}
		if err := protocol.CeilingN.Check(f.instance+": n", inst.N()); err != nil {
			return err
		}
		var ok bool
		if set, ok = cfg.SettingFor(inst.D()); !ok {
			for _, name := range []string{"k", "T", "sigma"} {
				if !changed(name) {
					return fmt.Errorf("%s: no setting for d = %d in params.yaml: give --k, --T and --sigma", f.instance, inst.D())
				}
			}
		}
		set.D, set.N = inst.D(), inst.N()
		geometry = "csv:" + f.instance
	} else {
		if !cmd.Flags().Changed("d") {
			return fmt.Errorf("--d is required (the paper's settings: d = 2, 3, 4, 5), or give --instance FILE")
		}
		g, err := envs.ParseGeometry(f.geometry)
		if err != nil {
			return fmt.Errorf("--geometry: %w", err)
		}
		var ok bool
		if set, ok = cfg.SettingFor(f.d); !ok {
			set.D = f.d
			for _, name := range []string{"n", "k", "T", "sigma"} {
				if !changed(name) {
					return fmt.Errorf("no setting for d = %d in params.yaml: give --n, --k, --T and --sigma", f.d)
				}
			}
		}
		if changed("n") {
			set.N = f.n
		}
		inst, err = envs.Generate(g, set.D, set.N, f.seed)
		if err != nil {
			return err
		}
	}
	if changed("k") {
		set.K = f.k
	}
	if changed("T") {
		set.T = f.T
	}
	if changed("sigma") {
		set.Sigma = f.sigma
	}
	if set.K < 1 || set.K > inst.N() {
		if changed("k") {
			return fmt.Errorf("--k %d: slate size must be between 1 and n = %d", set.K, inst.N())
		}
		return fmt.Errorf("k = %d (the setting's): slate size must be between 1 and n = %d; give --k", set.K, inst.N())
	}
	var params map[string]float64
	if a, ok := cfg.Algorithm(spec.Name); ok {
		params = a.Params
	}
	at := "--d"
	if f.instance != "" {
		at = f.instance
	}
	if err := protocol.CheckParams(spec, params, inst.D(), "algorithms."+spec.Name+".params", at); err != nil {
		return err
	}
	ref := make([]float64, inst.D())
	for j := range ref {
		ref[j] = cfg.Reference
	}
	bench := algos.ComputeBenchmarks(inst, set.K, ref)
	start := time.Now()
	tr, sum, err := algos.Run(algos.RunSpec{
		Algo: spec.Name, Eta: f.eta, Params: params, Instance: inst,
		K: set.K, T: set.T, Sigma: set.Sigma, Seed: f.seed,
		MinPulls: cfg.MinPulls, Ref: ref, Window: cfg.Metrics.HVWindow,
	}, bench)
	if err != nil {
		return err
	}
	res := runResult{
		Algo: spec.Name, Eta: f.eta, D: inst.D(), N: inst.N(), K: set.K, T: set.T, Sigma: set.Sigma,
		Geometry: geometry, Seed: f.seed, HVLast100: sum.HVLast, VStar: sum.VStar, HVGreedy: sum.HVGreedy,
		RegretAlpha: sum.RegretAlpha, RegretAlphaPos: sum.RegretPos, RegretExact: sum.RegretExact,
		SStar: bench.SStar, GStar: bench.GStar, Seconds: time.Since(start).Seconds(),
	}
	if !spec.UsesEta {
		res.Eta = 0
	}
	if f.traj {
		res.Trajectory = tr.HV
	}
	out := cmd.OutOrStdout()
	if f.jsonOut {
		enc := json.NewEncoder(out)
		return enc.Encode(res)
	}
	fmt.Fprintf(out, "%s on %s, d=%d n=%d k=%d T=%d σ=%g seed=%d", res.Algo, res.Geometry, res.D, res.N, res.K, res.T, res.Sigma, res.Seed)
	if spec.UsesEta {
		fmt.Fprintf(out, " η=%g", res.Eta)
	}
	fmt.Fprintf(out, "\n  HV_last%-4d       %.6f\n", sum.Window, res.HVLast100)
	fmt.Fprintf(out, "  V* (exact)        %.6f   S* = %v\n", res.VStar, res.SStar)
	fmt.Fprintf(out, "  HV(G*) (greedy)   %.6f   G* = %v\n", res.HVGreedy, res.GStar)
	fmt.Fprintf(out, "  α-regret          %.4f   (signed Σ αV − HV(S_t), V = %s)\n", res.RegretAlpha, map[bool]string{true: "V*", false: "HV(G*)"}[res.D == 2])
	fmt.Fprintf(out, "  α-regret, ≥0 part %.4f   (what the paper's tables print)\n", res.RegretAlphaPos)
	fmt.Fprintf(out, "  exact regret      %.4f   (Σ V* − HV(S_t))\n", res.RegretExact)
	fmt.Fprintf(out, "  simulated in %.3fs\n", res.Seconds)
	if f.traj {
		return printTrajectory(out, res.Trajectory)
	}
	return nil
}

// printTrajectory prints a run's trajectory: a header, then one line per
// round, its number (from 1) and HV(S_t), tab-separated.
func printTrajectory(w io.Writer, hv []float64) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "round\thv")
	for i, h := range hv {
		fmt.Fprintf(bw, "%d\t%.9g\n", i+1, h)
	}
	return bw.Flush()
}

func newAlgosCommand() *cobra.Command {
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "algos",
		Short: "List the algorithms with their fidelity mark and parameters",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			all := algos.All()
			if jsonOut {
				type row struct {
					Name     string        `json:"name"`
					Family   string        `json:"family"`
					Fidelity string        `json:"fidelity"`
					UsesEta  bool          `json:"uses_eta"`
					Params   []algos.Param `json:"params"`
					Cite     string        `json:"cite"`
					Summary  string        `json:"summary"`
				}
				var rows []row
				for _, s := range all {
					rows = append(rows, row{s.Name, s.Family, string(s.Fidelity), s.UsesEta, s.Params, s.Cite, s.Summary})
				}
				return json.NewEncoder(out).Encode(rows)
			}
			fmt.Fprintf(out, "%-16s %-10s %-9s %-4s %s\n", "ALGORITHM", "FAMILY", "FIDELITY", "η", "PARAMETERS")
			for _, s := range all {
				eta := "-"
				if s.UsesEta {
					eta = "yes"
				}
				params := ""
				for i, p := range s.Params {
					if i > 0 {
						params += ", "
					}
					params += fmt.Sprintf("%s=%g", p.Name, p.Default)
				}
				if params == "" {
					params = "-"
				}
				fmt.Fprintf(out, "%-16s %-10s %-9s %-4s %s\n", s.Name, s.Family, s.Fidelity, eta, params)
				fmt.Fprintf(out, "    %s\n", s.Summary)
				for _, p := range s.Params {
					fmt.Fprintf(out, "    %s: %s\n", p.Name, p.Doc)
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print JSON")
	return cmd
}
