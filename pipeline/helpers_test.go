package pipeline

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"syscall"
	"testing"

	"thv/artifacts"
)

// workerEnv, when set, makes the test binary a `thv exec-task`-like worker
// on the store it names, with the fake kinds: the process executor's tests
// start the test binary itself as their worker.
const workerEnv = "THV_PIPELINE_TEST_WORKER"

// workerOutEnv names the worker's scratch store (as exec-task --out);
// hogEnv makes gen allocate twice that many MiB under an address-space
// limit of that many (as exec-task --max-memory).
const (
	workerOutEnv = "THV_PIPELINE_TEST_OUT"
	hogEnv       = "THV_PIPELINE_TEST_HOG"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(workerEnv); dir != "" {
		if err := serveTestWorker(dir); err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func serveTestWorker(dir string) error {
	st, err := artifacts.Open(dir, artifacts.Create)
	if err != nil {
		return err
	}
	w := &Worker{Store: st}
	if out := os.Getenv(workerOutEnv); out != "" {
		if w.Out, err = artifacts.Open(out, artifacts.Scratch); err != nil {
			return err
		}
	}
	kinds := fakeKindList()
	if mib, _ := strconv.Atoi(os.Getenv(hogEnv)); mib > 0 {
		lim := syscall.Rlimit{Cur: uint64(mib) << 20, Max: uint64(mib) << 20}
		if err := syscall.Setrlimit(syscall.RLIMIT_AS, &lim); err != nil {
			return err
		}
		kinds[0].Run = func(context.Context, []byte, map[string][]byte) (map[string][]byte, error) {
			b := make([]byte, 2*mib<<20)
			for i := range b {
				b[i] = byte(i)
			}
			return map[string][]byte{"x": b[:1]}, nil
		}
	}
	if w.Kinds, err = NewKinds(newFakeCode(), kinds...); err != nil {
		return err
	}
	lie := os.Getenv(liarEnv)
	if lie == "" {
		return ServeWorker(context.Background(), w, os.Stdin, os.Stdout)
	}
	// A lying worker: the protocol of ServeWorker, with false answers.
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(nil, maxSpecLine)
	enc := json.NewEncoder(os.Stdout)
	for sc.Scan() {
		var spec Spec
		if err := json.Unmarshal(sc.Bytes(), &spec); err != nil {
			return err
		}
		outs, err := w.Execute(context.Background(), &spec)
		if err != nil {
			return err
		}
		for name, d := range outs {
			switch lie {
			case "digest":
				if outs[name], err = w.dest().Put([]byte("forged " + name)); err != nil {
					return err
				}
			case "objects":
				// Its stored bytes overwritten, wherever they lie.
				loc, ok := w.dest().Locate(d)
				if !ok {
					return fmt.Errorf("output %s not stored", name)
				}
				f, err := os.OpenFile(loc.Path, os.O_RDWR, 0)
				if err != nil {
					os.Chmod(loc.Path, 0o644)
					if f, err = os.OpenFile(loc.Path, os.O_RDWR, 0); err != nil {
						return err
					}
				}
				_, err = f.WriteAt([]byte("forged " + name)[:min(loc.Length, int64(len("forged "+name)))], loc.Offset)
				f.Close()
				if err != nil {
					return err
				}
			}
		}
		if err := enc.Encode(specResult{Task: spec.Task, Outputs: outs}); err != nil {
			return err
		}
	}
	return sc.Err()
}

func testProcessExecutor(e *env) *Process {
	return &Process{Command: []string{os.Args[0]}, Env: append(os.Environ(), workerEnv+"="+e.store.Root())}
}

func newTextLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

// outputOf is the digest of o's output name (zero if it has none).
func outputOf(o Outputs, name string) artifacts.Digest {
	d, _ := o.Get(name)
	return d
}

// withOutput is a copy of o with output name's digest set to d.
func withOutput(o Outputs, name string, d artifacts.Digest) Outputs {
	m := o.Map()
	if m == nil {
		m = map[string]artifacts.Digest{}
	}
	m[name] = d
	return OutputsOf(m)
}
