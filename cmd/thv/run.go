package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"thv/algos"
	"thv/envs"
	"thv/pipeline/userfile"
	"thv/protocol/config"
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
a CSV instance given with --instance) and print hv_last (the mean HV over
the last hv_window rounds of params.yaml), the benchmarks V* and HV(G*),
and the regrets.

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
// limits as params.yaml's settings, protocol/config/limits.go).
func checkRunFlags(cmd *cobra.Command, f runFlags) error {
	changed := cmd.Flags().Changed
	ints := []struct {
		flag    string
		v       int
		min     int
		what    string
		ceiling config.Ceiling
	}{
		{"d", f.d, 2, "number of objectives", config.CeilingD},
		{"n", f.n, 1, "number of arms", config.CeilingN},
		{"k", f.k, 1, "slate size", config.CeilingK},
		{"T", f.T, 1, "horizon", config.CeilingT},
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
		if err := config.CheckSigma("--sigma", f.sigma); err != nil {
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
	Algo     string  `json:"algo"`
	Eta      float64 `json:"eta"`
	D        int     `json:"d"`
	N        int     `json:"n"`
	K        int     `json:"k"`
	T        int     `json:"T"`
	Sigma    float64 `json:"sigma"`
	Geometry string  `json:"geometry"`
	Seed     uint64  `json:"seed"`
	// HVWindow and HVLast are the mean HV(S_t) over the last hv_window
	// rounds, as the run summaries' hv_last and window columns.
	HVWindow       int     `json:"hv_window"`
	HVLast         float64 `json:"hv_last"`
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
	cfg, err := config.Load(config.LoadOptions{ParamsFile: f.params, Profile: f.profile, Set: f.paramSets})
	if err != nil {
		return err
	}
	inst, set, geometry, err := runInstance(cmd, f, cfg)
	if err != nil {
		return err
	}
	rs, err := runSpec(f, cfg, spec, inst, set)
	if err != nil {
		return err
	}
	bench := algos.ComputeBenchmarks(inst, set.K, rs.Ref)
	start := time.Now()
	tr, sum, err := algos.Run(rs, bench)
	if err != nil {
		return err
	}
	res := runResult{
		Algo: spec.Name, Eta: f.eta, D: inst.D(), N: inst.N(), K: set.K, T: set.T, Sigma: set.Sigma,
		Geometry: geometry, Seed: f.seed, HVWindow: sum.Window, HVLast: sum.HVLast, VStar: sum.VStar, HVGreedy: sum.HVGreedy,
		RegretAlpha: sum.RegretAlpha, RegretAlphaPos: sum.RegretPos, RegretExact: sum.RegretExact,
		SStar: bench.SStar, GStar: bench.GStar, Seconds: time.Since(start).Seconds(),
	}
	if !spec.UsesEta {
		res.Eta = 0
	}
	if f.traj {
		res.Trajectory = tr.HV
	}
	if f.jsonOut {
		return json.NewEncoder(cmd.OutOrStdout()).Encode(res)
	}
	res.print(cmd.OutOrStdout(), spec.UsesEta)
	if f.traj {
		return printTrajectory(cmd.OutOrStdout(), res.Trajectory)
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

// runSpec is the run of thv run's flags: the algorithm's parameters,
// eta_scale and m0 as the protocol gives them (its own, else the
// protocol's), checked against the instance.
func runSpec(f runFlags, cfg *config.Config, spec algos.Spec, inst *envs.Instance, set config.Setting) (algos.RunSpec, error) {
	var params map[string]float64
	etaScale, minPulls := cfg.EtaScale, cfg.MinPulls
	if a, ok := cfg.Algorithm(spec.Name); ok {
		params, etaScale, minPulls = a.Params, cfg.EtaScaleOf(a), cfg.MinPullsOf(a)
	}
	at := "--d"
	if f.instance != "" {
		at = f.instance
	}
	if err := config.CheckParams(spec, params, inst.D(), "algorithms."+spec.Name+".params", at); err != nil {
		return algos.RunSpec{}, err
	}
	return algos.RunSpec{
		Algo: spec.Name, Eta: f.eta, Params: params, Instance: inst,
		K: set.K, T: set.T, Sigma: set.Sigma, Seed: f.seed,
		MinPulls: minPulls, Ref: slices.Repeat([]float64{cfg.Reference}, inst.D()), Window: cfg.Metrics.HVWindow, EtaScale: etaScale,
	}, nil
}

// runInstance is the instance of thv run's flags (a CSV file, or the
// generator's) and its setting: params.yaml's of its d, with the flags
// given over it.
func runInstance(cmd *cobra.Command, f runFlags, cfg *config.Config) (*envs.Instance, config.Setting, string, error) {
	changed := cmd.Flags().Changed
	var inst *envs.Instance
	var set config.Setting
	geometry := f.geometry
	if f.instance != "" {
		var err error
		if inst, err = runCSVInstance(f.instance); err != nil {
			return nil, set, "", err
		}
		var ok bool
		if set, ok = cfg.SettingFor(inst.D()); !ok && (!changed("k") || !changed("T") || !changed("sigma")) {
			return nil, set, "", fmt.Errorf("%s: no setting for d = %d in params.yaml: give --k, --T and --sigma", f.instance, inst.D())
		}
		set.D, set.N = inst.D(), inst.N()
		geometry = "csv:" + f.instance
	} else {
		if !changed("d") {
			return nil, set, "", fmt.Errorf("--d is required (the paper's settings: d = 2, 3, 4, 5), or give --instance FILE")
		}
		g, err := envs.ParseGeometry(f.geometry)
		if err != nil {
			return nil, set, "", fmt.Errorf("--geometry: %w", err)
		}
		var ok bool
		if set, ok = cfg.SettingFor(f.d); !ok && (!changed("n") || !changed("k") || !changed("T") || !changed("sigma")) {
			return nil, set, "", fmt.Errorf("no setting for d = %d in params.yaml: give --n, --k, --T and --sigma", f.d)
		}
		set.D = f.d
		if changed("n") {
			set.N = f.n
		}
		if inst, err = envs.Generate(g, set.D, set.N, f.seed); err != nil {
			return nil, set, "", err
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
			return nil, set, "", fmt.Errorf("--k %d: slate size must be between 1 and n = %d", set.K, inst.N())
		}
		return nil, set, "", fmt.Errorf("k = %d (the setting's): slate size must be between 1 and n = %d; give --k", set.K, inst.N())
	}
	return inst, set, geometry, nil
}

// runCSVInstance reads the instance of --instance FILE within the
// ceilings on d and n.
func runCSVInstance(path string) (*envs.Instance, error) {
	file, err := userfile.Open(path, maxInstanceBytes)
	if err != nil {
		return nil, fmt.Errorf("--instance: %w", err)
	}
	inst, err := envs.LoadCSV(file)
	file.Close()
	if errors.Is(err, userfile.ErrTooLarge) { // it grew after the check
		return nil, fmt.Errorf("--instance: %s: larger than the limit of %s", path, userfile.Size(maxInstanceBytes))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := config.CeilingD.Check(path+": d", inst.D()); err != nil {
		return nil, err
	}
	return inst, config.CeilingN.Check(path+": n", inst.N())
}

// print prints the run's metrics as text.
func (res runResult) print(out io.Writer, usesEta bool) {
	fmt.Fprintf(out, "%s on %s, d=%d n=%d k=%d T=%d σ=%g seed=%d", res.Algo, res.Geometry, res.D, res.N, res.K, res.T, res.Sigma, res.Seed)
	if usesEta {
		fmt.Fprintf(out, " η=%g", res.Eta)
	}
	fmt.Fprintf(out, "\n  HV_last%-4d       %.6f\n", res.HVWindow, res.HVLast)
	fmt.Fprintf(out, "  V* (exact)        %.6f   S* = %v\n", res.VStar, res.SStar)
	fmt.Fprintf(out, "  HV(G*) (greedy)   %.6f   G* = %v\n", res.HVGreedy, res.GStar)
	fmt.Fprintf(out, "  α-regret          %.4f   (signed Σ αV − HV(S_t), V = %s)\n", res.RegretAlpha, map[bool]string{true: "V*", false: "HV(G*)"}[res.D == 2])
	fmt.Fprintf(out, "  α-regret, ≥0 part %.4f   (what the paper's tables print)\n", res.RegretAlphaPos)
	fmt.Fprintf(out, "  exact regret      %.4f   (Σ V* − HV(S_t))\n", res.RegretExact)
	fmt.Fprintf(out, "  simulated in %.3fs\n", res.Seconds)
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
