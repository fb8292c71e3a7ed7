package main

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime/debug"
	"syscall"

	"github.com/spf13/cobra"

	"thv/artifacts"
	"thv/pipeline"
	"thv/protocol"
)

func newExecTaskCommand() *cobra.Command {
	var storeDir, outDir string
	var selfCheck bool
	var maxMemory int64
	var selfCheckExceed string
	cmd := &cobra.Command{
		Use:   "exec-task --store DIR [--out DIR] [SPEC.json ...]",
		Short: "Execute task specs against a store (the worker side of the executors)",
		Long: `Execute task specs, as written by thv repro's executors, against a store:
read each spec's inputs from the store, check that this binary's code
identity gives the spec's key (a worker built from other code refuses),
run the stage, and store its outputs and index entry. Prints one JSON
result line per spec: {"task", "outputs"} or {"task", "error", "input"}.

With SPEC files, executes each (a file may hold several specs, one per
line). Without, serves specs from standard input one line at a time until
it closes: this is how --executor process drives its workers.

With --out, the store is only read (it may be read-only: a container's
mount) and outputs and index entries go to the store at --out, created if
needed; the caller imports them (--executor container) or compares them
(thv verify).`,
		Example: `  thv exec-task --store .thv spec.json`,
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if selfCheck {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(probeSandbox(storeDir, outDir))
			}
			if selfCheckExceed != "" {
				return serveExceeding(cmd.Context(), cmd.InOrStdin(), cmd.OutOrStdout(), selfCheckExceed)
			}
			if storeDir == "" {
				return fmt.Errorf("exec-task: --store is required")
			}
			if maxMemory < 0 {
				return fmt.Errorf("exec-task: --max-memory %d: want a positive number of bytes, or 0 for none", maxMemory)
			}
			if maxMemory > 0 {
				// The ceiling of a verifier's worker: an allocation
				// beyond it ends this process with the runtime's
				// out-of-memory error, which the host reports as the
				// task's. debug.SetMemoryLimit makes the collector
				// work harder before that.
				lim := syscall.Rlimit{Cur: uint64(maxMemory), Max: uint64(maxMemory)}
				if err := syscall.Setrlimit(syscall.RLIMIT_AS, &lim); err != nil {
					return fmt.Errorf("exec-task: --max-memory: %w", err)
				}
				debug.SetMemoryLimit(maxMemory / 2)
			}
			var st, out *artifacts.Store
			if outDir == "" {
				st, err = artifacts.Open(storeDir, artifacts.Create)
			} else {
				st, err = artifacts.Open(storeDir, artifacts.Existing)
				if err == nil {
					out, err = artifacts.Open(outDir, artifacts.Scratch)
				}
			}
			if err != nil {
				return err
			}
			kinds, err := protocol.Kinds()
			if err != nil {
				return err
			}
			w := &pipeline.Worker{Store: st, Kinds: kinds, Out: out}
			// A worker writing the project store does not fsync each
			// file (artifacts/durable.go): it ends with the store's
			// barrier, so that what it answered is durable once it
			// has exited — a Slurm element's host reads its results
			// after that, from another machine whose barrier does not
			// cover this one's writes.
			if out == nil {
				defer func() {
					if serr := st.Sync(); serr != nil && err == nil {
						err = serr
					}
				}()
			}
			if len(args) == 0 {
				return pipeline.ServeWorker(cmd.Context(), w, cmd.InOrStdin(), cmd.OutOrStdout())
			}
			failed := 0
			for _, name := range args {
				f, err := os.Open(name)
				if err != nil {
					return err
				}
				err = pipeline.ServeWorker(cmd.Context(), w, f, countingWriter{cmd.OutOrStdout(), &failed})
				f.Close()
				if err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
			}
			if failed > 0 {
				return fmt.Errorf("%d of the specs failed (see their error lines)", failed)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&storeDir, "store", "", "the artifact store the specs' inputs are in and their outputs go to")
	cmd.Flags().StringVar(&outDir, "out", "", "a scratch store for the outputs instead, written without fsync (--store is then only read)")
	cmd.Flags().Int64Var(&maxMemory, "max-memory", 0, "memory ceiling in bytes (address space of this worker process); 0: none")
	cmd.Flags().BoolVar(&selfCheck, "self-check", false, "print the confinement this worker sees (user, capabilities, seccomp, mounts, limits, writable paths, network; selfcheck.go) as JSON, and exit")
	cmd.Flags().MarkHidden("self-check")
	cmd.Flags().StringVar(&selfCheckExceed, "self-check-exceed", "", "serve specs by breaking a limit: memory=BYTES allocates that much for each, threads=N starts that many threads, sleep=SECONDS sleeps (for the container tests)")
	cmd.Flags().MarkHidden("self-check-exceed")
	return cmd
}

// countingWriter passes result lines through and counts the failed ones.
type countingWriter struct {
	w      interface{ Write([]byte) (int, error) }
	failed *int
}

func (c countingWriter) Write(p []byte) (int, error) {
	var r struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(p, &r) == nil && r.Error != "" {
		*c.failed++
	}
	return c.w.Write(p)
}
