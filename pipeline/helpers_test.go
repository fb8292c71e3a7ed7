package pipeline

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"

	"thv/artifacts"
)

// workerEnv, when set, makes the test binary a `thv exec-task`-like worker
// on the store it names, with the fake kinds: the process executor's tests
// start the test binary itself as their worker.
const workerEnv = "THV_PIPELINE_TEST_WORKER"

func TestMain(m *testing.M) {
	if dir := os.Getenv(workerEnv); dir != "" {
		st, err := artifacts.Open(dir)
		if err == nil {
			var k *Kinds
			k, err = NewKinds(newFakeCode(), fakeKindList()...)
			if err == nil {
				err = ServeWorker(context.Background(), &Worker{Store: st, Kinds: k}, os.Stdin, os.Stdout)
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func testProcessExecutor(e *env) *Process {
	return &Process{Command: []string{os.Args[0]}, Env: append(os.Environ(), workerEnv+"="+e.store.Root())}
}

func newTextLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }
