package algos

import (
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"testing"

	"thv/internal/testenv"
)

// numpyScript prints NumPy's np.argsort (default kind) of the forced
// initialisation's pull counts for every (n, k) of the paper, and of
// random arrays drawn from seed, as JSON. testdata/numpy_argsort.json is
// its output for seed 24, 120 arrays, n < 200, with Debian 12's
// python3-numpy 1.24.2 (the paper's NumPy) on amd64:
//
//	python3 -c "$SCRIPT" 24 120 200 > algos/testdata/numpy_argsort.json
const numpyScript = `
import json, sys, platform, numpy as np
seed, count, maxn = (int(a) for a in sys.argv[1:4])
rng = np.random.default_rng(seed)
cases = []
for n, k in ((36, 3), (60, 4), (100, 5), (150, 6)):
    c = np.zeros(n, dtype=np.int64)
    while (c < 2).any():
        p = np.argsort(c)
        cases.append({"keys": c.tolist(), "perm": p.tolist()})
        c[p[:k]] += 1
for _ in range(count):
    n = int(rng.integers(1, maxn))
    c = rng.integers(0, int(rng.choice([1, 2, 3, 5, 50, 10**6])), size=n)
    cases.append({"keys": c.tolist(), "perm": np.argsort(c).tolist()})
for n in (17, 64, 257):
    for c in (np.arange(n)[::-1].copy(), np.concatenate([np.arange(n//2), np.arange(n - n//2)[::-1]])):
        cases.append({"keys": c.tolist(), "perm": np.argsort(c).tolist()})
print(json.dumps({"numpy": np.__version__, "python": platform.python_version(), "machine": platform.machine(), "cases": cases}, separators=(",", ":")))
`

type numpyCases struct {
	NumPy string `json:"numpy"`
	Cases []struct {
		Keys []int `json:"keys"`
		Perm []int `json:"perm"`
	} `json:"cases"`
}

func checkNumpyCases(t *testing.T, cs numpyCases) {
	t.Helper()
	if len(cs.Cases) < 100 {
		t.Fatalf("only %d cases", len(cs.Cases))
	}
	for i, c := range cs.Cases {
		got := make([]int, len(c.Keys))
		numpyArgsort(c.Keys, got)
		if !slices.Equal(got, c.Perm) {
			t.Fatalf("case %d (n = %d): numpyArgsort gave %v, NumPy %s gave %v", i, len(c.Keys), got, cs.NumPy, c.Perm)
		}
	}
}

// TestNumpyArgsort: the emulation returns NumPy 1.24.2's permutation on
// the recorded cases, ties and all.
func TestNumpyArgsort(t *testing.T) {
	b, err := os.ReadFile("testdata/numpy_argsort.json")
	if err != nil {
		t.Fatal(err)
	}
	var cs numpyCases
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	if cs.NumPy != "1.24.2" {
		t.Fatalf("fixture from NumPy %s, want 1.24.2", cs.NumPy)
	}
	checkNumpyCases(t, cs)
}

// TestNumpyArgsortLive runs NumPy itself on fresh random arrays. It needs
// NumPy 1.24 (Debian 12's python3-numpy): other versions may sort ties
// differently (1.25 added an AVX-512 argsort).
func TestNumpyArgsortLive(t *testing.T) {
	py := testenv.LookPath(t, "python3")
	if err := exec.Command(py, "-c", "import numpy; assert numpy.__version__.startswith('1.24.')").Run(); err != nil {
		// The python3 on PATH may be another installation; Debian's is the
		// one .ci/run installs NumPy for.
		py = "/usr/bin/python3"
		if err := exec.Command(py, "-c", "import numpy; assert numpy.__version__.startswith('1.24.')").Run(); err != nil {
			testenv.Missing(t, "NumPy 1.24 for python3 (apt-get install python3-numpy on Debian 12)")
		}
	}
	out, err := exec.Command(py, "-c", numpyScript, "2027", "400", "600").Output()
	if err != nil {
		t.Fatal(err)
	}
	var cs numpyCases
	if err := json.Unmarshal(out, &cs); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d arrays, NumPy %s", len(cs.Cases), cs.NumPy)
	checkNumpyCases(t, cs)
}

func TestNumpyArgsortHeapsortFallback(t *testing.T) {
	// The heapsort fallback sorts too (NumPy reaches it only on
	// adversarial inputs, which the recorded cases may not contain).
	keys := []int{5, 3, 9, 1, 1, 7, 3, 0, 2, 8, 6, 4}
	idx := make([]int, len(keys))
	for i := range idx {
		idx[i] = i
	}
	numpyHeapsort(keys, idx)
	for i := 1; i < len(idx); i++ {
		if keys[idx[i-1]] > keys[idx[i]] {
			t.Fatalf("heapsort left %v unsorted: %v", keys, idx)
		}
	}
}
