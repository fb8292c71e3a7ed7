package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	thvmodule "thv"
	"thv/artifacts"
	"thv/pipeline"
	"thv/stages/compare"
	"thv/stages/formats"
	"thv/stages/protocol"
)

func newReadingsCommand() *cobra.Command {
	var pf projectFlags
	var jobs int
	var only []string
	var ef executorFlags
	cmd := &cobra.Command{
		Use:   "readings [--only NAME]...",
		Short: "Run the readings sweep: the paper's open readings, each compared with its published values",
		Long: `Run every reading of params.yaml's readings section (docs/compare.md): the
protocol with the reading's keys set, as --set sets them, on the settings the
paper publishes values for. Each reading is an ordinary pipeline run against
the same store, so the tasks it shares with another reading (or with thv
repro) are cache hits: a reading of THV-UCB's δ reruns only THV-UCB's runs.
Each writes its lock to <results>/readings/<name>.lock.

The report, <results>/readings.md and <results>/readings.parquet, shows
per reading how many of the published values agree (as thv compare judges
them), per algorithm, the width of our CIs against the published ones, and
the claims.`,
		Example: `  thv readings                 # every reading (the paper's d = 2, 3 settings)
  thv readings --profile quick # a fast check of the sweep itself
  thv readings --only default --only fixed`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opt := protocol.Options{
				LoadOptions: protocol.LoadOptions{ParamsFile: pf.params, Profile: pf.profile, Set: pf.set},
				StoreDir:    pf.store,
			}
			base, err := protocol.LoadConfig(opt.LoadOptions)
			if err != nil {
				return err
			}
			sweep := base.Readings
			proto, err := base.Describe()
			if err != nil {
				return err
			}
			if len(sweep.Variants) == 0 {
				return fmt.Errorf("params: readings.variants is empty: nothing to sweep (see the embedded params.yaml)")
			}
			for _, name := range only {
				if _, ok := sweep.Lookup(name); !ok {
					return usageError(fmt.Errorf("--only %q: no such reading (readings: %s)", name, strings.Join(readingNames(sweep), ", ")))
				}
			}
			selected := len(sweep.Variants)
			if len(only) > 0 {
				selected = 0
				for _, v := range sweep.Variants {
					if slices.Contains(only, v.Name) {
						selected++
					}
				}
			}
			dir, err := os.Getwd()
			if err != nil {
				return err
			}
			results := base.Outputs.Results
			if !filepath.IsAbs(results) {
				results = filepath.Join(dir, results)
			}
			// A lock belongs to its protocol: with overrides that change
			// the protocol, the readings' locks go elsewhere.
			locksDir, err := protocol.ReadingsLockDir(opt.LoadOptions, results)
			if err != nil {
				return err
			}
			errw, out := cmd.ErrOrStderr(), cmd.OutOrStdout()
			var exec pipeline.Executor
			var image string
			var judged []compare.ReadingResult
			ref, err := protocol.ParseReference(thvmodule.PaperReference)
			if err != nil {
				return err
			}
			// The readings share one open store, one lock on it for the
			// whole sweep (no gc in between), one listing of its objects
			// for their no-op checks (pipeline.Listing), and one registry
			// of kinds, whose code identities and fingerprint are computed
			// once.
			if opt.Store, err = protocol.OpenStore(opt, dir); err != nil {
				return err
			}
			unlock, err := opt.Store.LockShared()
			if err != nil {
				return err
			}
			defer unlock()
			opt.Listing = pipeline.NewListing(opt.Store)
			if opt.Kinds, err = protocol.Kinds(); err != nil {
				return err
			}
			done := 0
			for _, v := range sweep.Variants {
				if len(only) > 0 && !slices.Contains(only, v.Name) {
					continue
				}
				done++
				// A reading runs once, or, with one fixed instance per cell,
				// once per instance seed of the sweep.
				cfg, err := protocol.LoadReading(opt.LoadOptions, &sweep, v)
				if err != nil {
					return err
				}
				runs, locks := []protocol.Reading{v}, []string{filepath.Join(locksDir, v.Name+".lock")}
				var seeds []uint64
				if cfg.Instances.Mode == protocol.InstancesFixed && len(sweep.InstanceSeeds) > 0 {
					seeds, runs, locks = sweep.InstanceSeeds, nil, nil
					for _, s := range seeds {
						runs = append(runs, v.ForInstance(s))
						locks = append(locks, filepath.Join(locksDir, v.Name, fmt.Sprintf("instance-seed=%d.lock", s)))
					}
				}
				r := compare.ReadingResult{Name: v.Name, Why: v.Why, Set: v.Set, InstanceSeeds: len(seeds), Proposed: cfg.Proposed()}
				readingProto, err := cfg.Describe()
				if err != nil {
					return err
				}
				var perInstance []compare.Results
				var regret string
				// Each run's project (its configuration, its lock read and
				// parsed) is opened while the run before it is checked.
				type opened struct {
					proj *protocol.Project
					err  error
				}
				open := func(j int) <-chan opened {
					ch := make(chan opened, 1)
					go func() {
						p, err := protocol.OpenReading(opt, &sweep, runs[j], locks[j])
						ch <- opened{p, err}
					}()
					return ch
				}
				next := open(0)
				for j := range runs {
					o := <-next
					if j+1 < len(runs) {
						next = open(j + 1)
					}
					proj, err := o.proj, o.err
					if err != nil {
						return err
					}
					if exec == nil {
						if jobs == 0 {
							jobs = ef.defaultJobs(proj)
						}
						if exec, image, err = ef.executor(proj); err != nil {
							return err
						}
						if exec != nil {
							defer exec.Close()
						}
					}
					label := v.Name
					if len(runs) > 1 {
						label = fmt.Sprintf("%s, instance seed %d (%d/%d)", v.Name, seeds[j], j+1, len(runs))
					}
					of := ""
					if selected > 1 {
						of = fmt.Sprintf(" (reading %d of the %d selected)", done, selected)
					}
					fmt.Fprintf(errw, "reading %s%s: %s\n", label, of, describeSet(runs[j].Set))
					start := time.Now()
					if err := os.MkdirAll(filepath.Dir(proj.LockPath), 0o755); err != nil {
						return err
					}
					prog := pipeline.NewProgress(errw, isTerminal(errw), jobs)
					rep, err := proj.Project.Repro(cmd.Context(), pipeline.Options{Jobs: jobs, Progress: prog, Executor: exec, Logger: logger(errw), Image: image})
					if err != nil {
						return fmt.Errorf("reading %s: %w", label, err)
					}
					if rep.Failed > 0 || rep.Blocked > 0 {
						return fmt.Errorf("reading %s: %d tasks failed, %d blocked (see FAILED lines above); fix the cause and rerun: finished tasks are kept", label, rep.Failed, rep.Blocked)
					}
					fmt.Fprintf(errw, "reading %s: %d tasks: %d executed, %d cached in %s\n", label, len(rep.Results), rep.Executed, rep.Cached, time.Since(start).Round(time.Millisecond))
					status := rep // a pass that ran nothing found every task up to date
					if rep.Executed > 0 {
						if status, err = proj.Status(cmd.Context()); err != nil {
							return err
						}
					}
					if j == 0 { // the claims and the key: the reading's first run
						if r.Rows, r.Claims, err = storedComparison(proj, status); err != nil {
							return fmt.Errorf("reading %s: %w", label, err)
						}
						r.CompareKey = taskKey(status, protocol.CompareID)
					}
					if len(runs) > 1 {
						res, err := storedResults(proj, status)
						if err != nil {
							return fmt.Errorf("reading %s: %w", label, err)
						}
						perInstance = append(perInstance, res)
						regret = proj.Config.Metrics.FinalRegret
					}
				}
				if len(runs) > 1 {
					r.Rows = compare.AcrossInstances(ref, readingProto, perInstance, regret)
				}
				judged = append(judged, r)
			}
			rows := make([]formats.ReadingRow, len(judged))
			var across []formats.Comparison
			for i, r := range judged {
				rows[i] = r.Summarize()
				rows[i].Protocol, rows[i].ProtocolDigest = proto.Name(), base.ProtocolDigest()
				if across == nil && len(r.Set) == 0 && r.InstanceSeeds > 0 {
					across = r.Rows // the page's headline (protocol.AcrossFile)
				}
			}
			pq, err := formats.EncodeReadings(rows)
			if err != nil {
				return err
			}
			report := compare.ReadingsMarkdown(judged, proto, ref.Tolerance.Percentile)
			if err := writeIfChanged(filepath.Join(results, "readings.parquet"), pq); err != nil {
				return err
			}
			if err := writeIfChanged(filepath.Join(results, protocol.ReadingsReport), []byte(report)); err != nil {
				return err
			}
			acrossPath := filepath.Join(results, protocol.AcrossFile)
			if across != nil {
				b, err := formats.EncodeComparisons(across)
				if err != nil {
					return err
				}
				if err := writeIfChanged(acrossPath, b); err != nil {
					return err
				}
			} else if err := os.Remove(acrossPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err // a sweep without the default reading: the one before's rows are not its
			}
			printReadings(out, rows, base.Proposed())
			fmt.Fprintf(out, "\nreport: %s\n", filepath.Join(results, "readings.md"))
			return nil
		},
	}
	pf.register(cmd)
	cmd.Flags().IntVarP(&jobs, "jobs", "j", 0, "parallel workers (default: all cores)")
	cmd.Flags().StringArrayVar(&only, "only", nil, "run only this reading (repeatable)")
	ef.register(cmd)
	return cmd
}

// taskKey is the key of task id in a status report ("" if it has none).
// writeIfChanged writes b to path (atomically) unless the file holds b
// already: a sweep that changed nothing writes nothing (and results/'s
// page, whose memo names these files' sizes and times, stays current).
func writeIfChanged(path string, b []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b) {
		return nil
	}
	return artifacts.WriteFileAtomic(path, b)
}

func taskKey(rep *pipeline.Report, id string) string {
	for _, res := range rep.Results {
		if res.Task.ID == id {
			return res.Key.String()
		}
	}
	return ""
}

func readingNames(r protocol.Readings) []string {
	var names []string
	for _, v := range r.Variants {
		names = append(names, v.Name)
	}
	return names
}

func describeSet(set []string) string {
	if len(set) == 0 {
		return "the defaults"
	}
	return strings.Join(set, ", ")
}

// printReadings prints the sweep's table; proposed names the proposed
// method, whose CI ratio has its column.
func printReadings(w io.Writer, rows []formats.ReadingRow, proposed string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "reading\tagree\tHV\tregret\tagree (a)\tclaims\tCI ratio %s HV\tCI ratio HV\tCI ratio regret\n", proposed)
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d/%d\t%d\t%d\t%d\t%d/%d\t%.2f\t%.2f\t%.2f\n", r.Reading, r.Agree, r.Values, r.AgreeHV, r.AgreeRegret, r.AgreeCI,
			r.ClaimsHold, r.Claims, r.CIRatioTHVUCBHV, r.CIRatioHV, r.CIRatioRegret)
	}
	tw.Flush()
}
