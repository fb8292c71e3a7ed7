package thv

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"thv/internal/testenv"
)

// TestWorkflowLint runs actionlint (github.com/rhysd/actionlint, installed
// by .ci/run) on the researchers' workflow, .github/workflows/reproduce.yml
// (docs/ci.md): its expressions, contexts, shell scripts (shellcheck, when
// installed) and action inputs. In CI a missing actionlint fails.
func TestWorkflowLint(t *testing.T) {
	names := []string{"actionlint"}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		for _, p := range filepath.SplitList(strings.TrimSpace(string(out))) {
			names = append(names, filepath.Join(p, "bin", "actionlint"))
		}
	}
	bin := testenv.LookPath(t, names...)
	out, err := exec.Command(bin, "-no-color", filepath.Join(".github", "workflows", "reproduce.yml")).CombinedOutput()
	if err != nil {
		t.Fatalf("actionlint: %v\n%s", err, out)
	}
}
