//go:build linux

package main

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"thv/internal/s3test"
	"thv/internal/testenv"
)

// recipeSection is the heading of docs/ci.md whose commands TestCIRecipe
// runs.
const recipeSection = "## Try it on one machine"

// recipeScript returns the shell blocks of the recipe section of
// docs/ci.md, in order, the first (its parameters) apart.
func recipeScript(t *testing.T) (params string, body []string) {
	t.Helper()
	doc := string(must(os.ReadFile(filepath.Join(moduleRoot(t), "docs", "ci.md"))))
	_, section, ok := strings.Cut(doc, "\n"+recipeSection+"\n")
	if !ok {
		t.Fatalf("docs/ci.md has no section %q", recipeSection)
	}
	if next := strings.Index(section, "\n## "); next >= 0 {
		section = section[:next]
	}
	blocks := regexp.MustCompile("(?s)\n```sh\n(.*?)\n```\n").FindAllStringSubmatch(section, -1)
	if len(blocks) < 2 {
		t.Fatalf("the recipe has %d sh blocks", len(blocks))
	}
	for _, b := range blocks[1:] {
		body = append(body, b[1])
	}
	return blocks[0][1], body
}

// TestCIRecipe runs docs/ci.md's recipe as written — an S3 server
// (versitygw), its bucket, the AWS_* exports, a key pair, two fresh clones
// sharing only the server — but for its first block's values: this
// repository (its committed HEAD), the tiny protocol and a free port. B
// fetches every task and writes A's lock; a missing bucket is named at
// once, with no retries; a key nobody signed with gives one warning and
// one line of counts, and --require-remote fails that run. Every process
// the recipe starts is stopped with it (its process group).
func TestCIRecipe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds thv twice and runs the tiny protocol three times")
	}
	s3test.Binary(t) // versitygw installed (in CI: or the test fails)
	for _, tool := range []string{"git", "make", "curl", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Missing(t, "%s is not installed", tool)
		}
	}
	root := moduleRoot(t)
	if err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Run(); err != nil {
		testenv.Missing(t, "%s is not a git checkout: the recipe clones it", root)
	}
	params, body := recipeScript(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	values := map[string]string{
		"REPO": root,
		"P":    `"--params stages/protocol/testdata/tiny.yaml"`,
		"LOCK": tinyLock,
		"PORT": port,
	}
	for name, v := range values {
		re := regexp.MustCompile(`(?m)^` + name + `=\S+`)
		if !re.MatchString(params) {
			t.Fatalf("the recipe's first block sets no %s:\n%s", name, params)
		}
		if name == "P" {
			re = regexp.MustCompile(`(?m)^P="[^"]*"`)
		}
		params = re.ReplaceAllLiteralString(params, name+"="+v)
	}
	script := "set -euo pipefail\n" + params + "\n" + strings.Join(body, "\n") + "\n"
	dir := t.TempDir()
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir(), "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_PROFILE=", "THV_REMOTE=", "THV_TRUSTED_KEYS=")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(20 * time.Minute):
		err = errTimedOut
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // the gateway too, if the script stopped before its kill
	text := out.String()
	if err != nil {
		t.Fatalf("the recipe failed: %v\n%s", err, text)
	}
	for _, want := range []string{
		"B's lock is A's, byte for byte",
		`there is no bucket "no-such-bucket" at this endpoint; create it first`,
		`entries signed by a key that is not trusted (it names itself "alice")`,
		"--require-remote: remote s3://thv-cache/demo could have served tasks that were computed instead",
		"failed, as --require-remote asks",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the recipe's output lacks %q", want)
		}
	}
	if n := strings.Count(text, "remote entry not used; computing the task"); n != 1 {
		t.Errorf("%d warnings of entries not used, want one (the others counted)", n)
	}
	if strings.Contains(text, "failed 5 times") {
		t.Error("a missing bucket was retried")
	}
	if !regexp.MustCompile(`\d+ tasks: 0 executed, \d+ cached`).MatchString(text) {
		t.Error("clone B executed tasks")
	}
	if t.Failed() {
		t.Logf("output:\n%s", text)
	}
}

var errTimedOut = &timeoutError{}

type timeoutError struct{}

func (*timeoutError) Error() string { return "timed out" }
