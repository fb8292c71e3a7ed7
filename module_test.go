package thv

import (
	"io/fs"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"thv/internal/testenv"
)

// TestModuleHoldsTheSource: every file git tracks is in Module (so a
// bundle's source/ rebuilds thv), but for thv.lock (a bundle has its own)
// and files under dot-directories other than .ci. A new top-level
// directory that the embed patterns miss fails here, naming it.
func TestModuleHoldsTheSource(t *testing.T) {
	out, err := exec.Command("git", "ls-files").Output()
	if err != nil {
		testenv.Missing(t, "git ls-files: %v: not a git checkout, or no git", err)
	}
	var embedded []string
	fs.WalkDir(Module, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			embedded = append(embedded, p)
		}
		return err
	})
	for _, f := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f == "thv.lock" || hiddenDir(f) {
			continue
		}
		if _, err := os.Lstat(f); err != nil {
			continue // deleted in the work tree, not yet in the index
		}
		if !slices.Contains(embedded, f) {
			t.Errorf("%s is tracked but not in thv.Module: add it to the //go:embed lines of Module in sources.go", f)
		}
	}
	for _, f := range embedded {
		if strings.Contains(f, "node_modules/") {
			t.Errorf("Module embeds %s: node_modules must stay out", f)
		}
	}
}

func hiddenDir(p string) bool {
	els := strings.Split(p, "/")
	for _, el := range els[:len(els)-1] {
		if strings.HasPrefix(el, ".") && el != ".ci" {
			return true
		}
	}
	return false
}
