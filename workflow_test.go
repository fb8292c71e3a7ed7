package thv

import (
	"os/exec"
	"path/filepath"
	"testing"

	"thv/internal/testenv"
)

// TestWorkflowLint runs actionlint (github.com/rhysd/actionlint, installed
// by .ci/run) on the researchers' workflow, .github/workflows/reproduce.yml
// (docs/ci.md): its expressions, contexts, shell scripts (shellcheck, when
// installed) and action inputs. In CI a missing actionlint fails.
func TestWorkflowLint(t *testing.T) {
	bin := testenv.LookGoTool(t, "actionlint", "github.com/rhysd/actionlint/cmd/actionlint@v1.7.12")
	out, err := exec.Command(bin, "-no-color", filepath.Join(".github", "workflows", "reproduce.yml")).CombinedOutput()
	if err != nil {
		t.Fatalf("actionlint: %v\n%s", err, out)
	}
}
