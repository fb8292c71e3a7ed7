package protocol

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"thv/protocol/config"
)

// TestOverridesNameTheLock: overrides that change the protocol's values
// name its lock after it (thv.set-<digits>.lock), by --set or THV_*
// alike; the same overrides name the same lock; overrides of where things
// go keep the protocol's lock.
func TestOverridesNameTheLock(t *testing.T) {
	dir := t.TempDir()
	lock := func(opt config.LoadOptions) string {
		t.Helper()
		p, err := Open(Options{LoadOptions: opt, Dir: dir, StoreDir: filepath.Join(dir, ".thv"), ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		return filepath.Base(p.LockPath)
	}
	if got := lock(config.LoadOptions{}); got != "thv.lock" {
		t.Errorf("no override: %s", got)
	}
	for _, set := range []string{"outputs.results=elsewhere", "readings.instance_seeds=[0, 1]"} {
		if got := lock(config.LoadOptions{Set: []string{set}}); got != "thv.lock" {
			t.Errorf("--set %s: %s", set, got)
		}
	}
	set := lock(config.LoadOptions{Set: []string{"seeds=[0]"}})
	if !strings.HasPrefix(set, "thv.set-") || len(set) != len("thv.set-12345678.lock") {
		t.Errorf("--set seeds=[0]: %s", set)
	}
	// Which runs keep their trajectory changes the tasks a lock records.
	if got := lock(config.LoadOptions{Set: []string{"outputs.trajectories=all"}}); !strings.HasPrefix(got, "thv.set-") || got == set {
		t.Errorf("--set outputs.trajectories=all: %s", got)
	}
	quick := lock(config.LoadOptions{Profile: "quick", Set: []string{"seeds=[0]"}})
	if !strings.HasPrefix(quick, "thv.quick.set-") || quick == "thv.quick.lock" {
		t.Errorf("--profile quick --set seeds=[0]: %s", quick)
	}
	t.Setenv("THV_SEEDS", "[0]")
	if got := lock(config.LoadOptions{}); got != set {
		t.Errorf("THV_SEEDS=[0]: %s, --set seeds=[0] gave %s", got, set)
	}
	t.Setenv("THV_SEEDS", "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]") // the paper's own
	if got := lock(config.LoadOptions{}); got != "thv.lock" {
		t.Errorf("THV_SEEDS as the paper's: %s", got)
	}
}

// TestLockReadAheadServesItsPathOnly: the lock read while the configuration
// loads serves only the path it was read from; another path is read
// afresh, and overrides (which rename the lock) read nothing ahead.
func TestLockReadAheadServesItsPathOnly(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "thv.quick.lock")
	if err := os.WriteFile(bad, []byte("not a lock"), 0o644); err != nil {
		t.Fatal(err)
	}
	ahead := readLockAhead(Options{Dir: dir}) // thv.lock: absent, an empty lock
	if ahead == nil || ahead.path != filepath.Join(dir, "thv.lock") {
		t.Fatalf("read ahead %+v, want thv.lock in %s", ahead, dir)
	}
	if l, err := ahead.take(filepath.Join(dir, "thv.lock"))(); err != nil || len(l.Tasks) != 0 {
		t.Errorf("the lock read ahead: %v, %v; want an empty lock", l, err)
	}
	if _, err := ahead.take(bad)(); err == nil {
		t.Errorf("another path was served the lock read ahead; want %s read, and refused", bad)
	}
	if a := readLockAhead(Options{Dir: dir, LoadOptions: config.LoadOptions{Set: []string{"seeds=[0]"}}}); a != nil {
		t.Errorf("an override read %s ahead; want nothing read ahead", a.path)
	}
}
