package protocol

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"thv/algos"
	_ "thv/algos/all"
	"thv/artifacts"
	"thv/pipeline"
)

// workerEnv, when set, makes the test binary a `thv exec-task` worker on
// the store it names (the process executor's tests start it).
const workerEnv = "THV_PROTOCOL_TEST_WORKER"

func TestMain(m *testing.M) {
	if dir := os.Getenv(workerEnv); dir != "" {
		err := func() error {
			st, err := artifacts.Open(dir, artifacts.Create)
			if err != nil {
				return err
			}
			k, err := Kinds()
			if err != nil {
				return err
			}
			return pipeline.ServeWorker(context.Background(), &pipeline.Worker{Store: st, Kinds: k}, os.Stdin, os.Stdout)
		}()
		if err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// goListUsers asks the go command which in-module packages each kind's code
// reaches: package → the "kind family" labels (as runFamily forms them)
// whose import closure holds it. It is independent of codeid, which parses
// the embedded sources itself.
func goListUsers(t *testing.T) map[string][]string {
	t.Helper()
	k, err := Kinds()
	if err != nil {
		t.Fatal(err)
	}
	roots := map[string][]string{} // label → root packages
	for _, name := range k.Names() {
		kind, _ := k.Lookup(name)
		if name != "run" {
			roots[name+" "] = []string{pipeline.PackageOf(kind.Run)}
			continue
		}
		for _, spec := range algos.All() {
			fam := pipeline.PackageOf(spec.New)
			roots[name+" "+fam] = []string{pipeline.PackageOf(kind.Run), fam}
		}
	}
	users := map[string][]string{}
	for _, label := range sortedKeys(roots) {
		args := append([]string{"list", "-deps", "-f", "{{if .Module}}{{if .Module.Main}}{{.ImportPath}}{{end}}{{end}}"}, roots[label]...)
		out, err := exec.Command("go", args...).Output()
		if err != nil {
			t.Fatalf("go %s: %v", strings.Join(args, " "), err)
		}
		for _, pkg := range strings.Fields(string(out)) {
			users[pkg] = append(users[pkg], label)
		}
	}
	b, _ := json.Marshal(users)
	t.Logf("go list users: %s", b)
	return users
}
