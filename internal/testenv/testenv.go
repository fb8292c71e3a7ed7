// Package testenv decides what a test does when this machine lacks
// something it needs (a tool, root, a file system, a file beside the
// project): outside CI the test is skipped, and says what to install; in
// CI, which provides everything the tests need (.ci/run), it fails, since
// a skipped test there would hide a gap.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// CI reports whether the tests run in continuous integration: the CI
// environment variable is set to anything but a false value ("false",
// "0"). .ci/run sets CI=true, as most CI services do.
func CI() bool {
	v := os.Getenv("CI")
	b, err := strconv.ParseBool(v)
	return v != "" && (err != nil || b)
}

// Missing ends the test t because something it needs is missing on this
// machine. The message, formatted as by fmt.Sprintf, says what is missing
// and how to provide it. Outside CI the test is skipped; in CI it fails.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if CI() {
		t.Fatalf("%s (in CI, where everything a test needs is installed, a missing requirement fails the test)", msg)
		return
	}
	t.Skip(msg)
}

// LookPath returns the path of the first of names found (on PATH, or as
// a path); if none is found the test is ended by Missing.
func LookPath(t testing.TB, names ...string) string {
	t.Helper()
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	Missing(t, "%s not found", names[0])
	return ""
}

// LookGoTool finds a tool that .ci/run installs with go install: on PATH,
// else in $(go env GOPATH)/bin, which need not be on PATH; if neither has
// it the test is ended by Missing, naming the go install command.
func LookGoTool(t testing.TB, name, pkg string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		for _, dir := range filepath.SplitList(strings.TrimSpace(string(out))) {
			if p, err := exec.LookPath(filepath.Join(dir, "bin", name)); err == nil {
				return p
			}
		}
	}
	Missing(t, "%s not found on PATH or in $(go env GOPATH)/bin: go install %s", name, pkg)
	return ""
}
