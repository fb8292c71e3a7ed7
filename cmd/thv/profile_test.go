package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCPUProfileFlag: the hidden --cpuprofile writes a profile of the
// command (gzip-compressed protobuf, as go tool pprof reads it), and a
// path it cannot create is an error that names the flag.
func TestCPUProfileFlag(t *testing.T) {
	bin := buildThv(t, moduleRoot(t))
	dir := t.TempDir()
	prof := filepath.Join(dir, "cpu.prof")
	if out, err := exec.Command(bin, "algos", "--cpuprofile", prof).CombinedOutput(); err != nil {
		t.Fatalf("thv algos --cpuprofile: %v\n%s", err, out)
	}
	b, err := os.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
		t.Fatalf("the profile (%d bytes) is not gzip data", len(b))
	}
	out, err := exec.Command(bin, "algos", "--cpuprofile", filepath.Join(dir, "missing", "cpu.prof")).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--cpuprofile") {
		t.Fatalf("an uncreatable profile path: err %v, output %q; want an error naming --cpuprofile", err, out)
	}
	if out, err := exec.Command(bin, "--help").CombinedOutput(); err != nil || strings.Contains(string(out), "cpuprofile") {
		t.Fatalf("thv --help: err %v; the flag must stay hidden:\n%s", err, out)
	}
}
