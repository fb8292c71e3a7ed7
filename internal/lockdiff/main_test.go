package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeLock(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const lockA = `{"version": 2, "tasks": [
{"id":"run/a","kind":"run","key":"sha256:1","outputs":{"summary":"sha256:aa","trajectory":"sha256:ab"}},
{"id":"select/a","kind":"select","key":"sha256:2","outputs":{"selection":"sha256:ba"}}
]}`

func TestKeysMayChangeOutputsMayNot(t *testing.T) {
	dir := t.TempDir()
	old := writeLock(t, dir, "old/x.lock", lockA)
	rekeyed := writeLock(t, dir, "new/x.lock", strings.ReplaceAll(lockA, `"sha256:1"`, `"sha256:9"`))
	var out strings.Builder
	same, err := run(&out, old, rekeyed, false)
	if err != nil || !same {
		t.Fatalf("new keys, same outputs: same = %v, err = %v\n%s", same, err, out.String())
	}
	if !strings.Contains(out.String(), "1 keys changed, 0 outputs changed") {
		t.Errorf("report does not count the changed key:\n%s", out.String())
	}
	// Directories pair their locks by relative path.
	same, err = run(&out, filepath.Dir(old), filepath.Dir(rekeyed), false)
	if err != nil || !same {
		t.Fatalf("directories: same = %v, err = %v", same, err)
	}

	changed := writeLock(t, dir, "changed.lock", strings.ReplaceAll(lockA, `"sha256:ba"`, `"sha256:bb"`))
	out.Reset()
	same, err = run(&out, old, changed, false)
	if err != nil || same {
		t.Fatalf("changed output: same = %v, err = %v", same, err)
	}
	for _, want := range []string{"outputs differ: select/a", "changed outputs by kind: select 1"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}

	fewer := writeLock(t, dir, "fewer.lock", `{"tasks": [{"id":"run/a","kind":"run","key":"sha256:1","outputs":{"summary":"sha256:aa","trajectory":"sha256:ab"}}]}`)
	out.Reset()
	if same, err = run(&out, old, fewer, false); err != nil || same || !strings.Contains(out.String(), "only old: select/a") {
		t.Fatalf("a missing task: same = %v, err = %v\n%s", same, err, out.String())
	}

	if _, err := run(&out, old, writeLock(t, dir, "bad.lock", "{"), false); err == nil {
		t.Error("a file that is no lock: no error")
	}
}
