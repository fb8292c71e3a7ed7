package artifacts_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"thv/artifacts"
	"thv/artifacts/damage"
	"thv/pipeline"
)

// TestForgedPackRecomputesItsTasks runs the pipeline of TestPowerCut on a
// store, forges the pack holding its outputs (an object's bytes, an index
// record pointed at another object's place, the index garbled) and checks
// what a verifier and the next pass do: every forged object is found
// (status --verify's check, VerifyOutputs), nothing is served wrong, the
// next pass re-executes exactly the tasks whose outputs the forgery took
// and ends with the lock of an untouched run, and the store checks clean.
func TestForgedPackRecomputesItsTasks(t *testing.T) {
	kinds := powerKinds(t)
	for _, tc := range []struct {
		name    string
		forge   func(t *testing.T, st *artifacts.Store, b, common artifacts.Digest)
		damaged []string // the tasks VerifyOutputs names, then re-executed
	}{
		{"object bytes", func(t *testing.T, st *artifacts.Store, b, _ artifacts.Digest) {
			damage.Flip(t, st, b)
		}, []string{"words/b"}},
		{"offset", func(t *testing.T, st *artifacts.Store, b, common artifacts.Digest) {
			if err := artifacts.ForgeIndexPoint(st, b, common); err != nil {
				t.Fatal(err)
			}
		}, []string{"words/b"}},
		{"index garbled", func(t *testing.T, st *artifacts.Store, b, _ artifacts.Digest) {
			if err := artifacts.ForgeIndexGarble(st, b); err != nil {
				t.Fatal(err)
			}
		}, nil}, // the index is not used: the pack is read, nothing lost
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			storeDir := filepath.Join(dir, ".thv")
			lock := filepath.Join(dir, "power.lock")
			st, err := artifacts.Open(storeDir, artifacts.Create)
			if err != nil {
				t.Fatal(err)
			}
			rep, _, err := powerRepro(t, st, kinds, lock, "to do is to be")
			if err != nil {
				t.Fatal(err)
			}
			want, _ := os.ReadFile(lock)
			var b, common artifacts.Digest
			for _, r := range rep.Results {
				for _, o := range r.Outputs {
					switch r.Task.ID {
					case "words/b":
						b = o.Digest
					case "common":
						common = o.Digest
					}
				}
			}
			tc.forge(t, st, b, common)

			// A verifier (another process: a fresh handle).
			v, err := artifacts.Open(storeDir, artifacts.Create)
			if err != nil {
				t.Fatal(err)
			}
			proj, err := pipeline.NewProject(powerPlan("to do is to be"), kinds, v, lock, "power")
			if err != nil {
				t.Fatal(err)
			}
			status, err := proj.Status(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			dmg, err := proj.VerifyOutputs(context.Background(), status)
			if err != nil {
				t.Fatal(err)
			}
			var named []string
			for _, d := range dmg {
				named = append(named, d.Task)
			}
			if !slices.Equal(named, tc.damaged) {
				t.Fatalf("the check named %v, want %v (%v)", named, tc.damaged, dmg)
			}
			_, ran, err := powerRepro(t, v, kinds, lock, "to do is to be")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ran, tc.damaged) {
				t.Errorf("the pass after the forgery executed %v, want %v", ran, tc.damaged)
			}
			if got, _ := os.ReadFile(lock); !bytes.Equal(got, want) {
				t.Errorf("the lock after the forgery:\n%s\nwant\n%s", got, want)
			}
			for _, d := range []artifacts.Digest{b, common} {
				if err := v.Verify(d); err != nil {
					t.Errorf("after the pass: %v", err)
				}
			}
			if _, err := v.Check(context.Background(), 2, nil); err != nil {
				t.Fatal(err)
			}
			if rep, err := v.Check(context.Background(), 2, nil); err != nil || len(rep.Problems) != 0 {
				t.Errorf("a second check: %v %v", rep.Problems, err)
			}
		})
	}
}
