package stats

import (
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"
)

// pairedFixtures mirrors testdata/scipy_fixtures.json (written by
// testdata/gen_fixtures.py with SciPy/NumPy; provenance inside).
type pairedFixtures struct {
	Provenance map[string]string `json:"provenance"`
	Cases      []struct {
		Name     string    `json:"name"`
		A        []float64 `json:"a"`
		B        []float64 `json:"b"`
		D        []float64 `json:"d"`
		MeanD    float64   `json:"mean_d"`
		Wins     int       `json:"wins"`
		CohensD  *float64  `json:"cohens_d"`
		NonFinD  string    `json:"cohens_d_nonfinite"`
		AutoSame bool      `json:"scipy_auto_equals_thv"`
		THV      struct {
			Method   string  `json:"method"` // exact, approx, none
			P        float64 `json:"p"`
			NNonzero int     `json:"n_nonzero"`
			Zeros    int     `json:"zeros"`
			Ties     bool    `json:"ties"`
		} `json:"thv"`
		Auto struct {
			P      *float64 `json:"p"`
			Method string   `json:"method"`
			Error  string   `json:"error"`
		} `json:"scipy_auto"`
	} `json:"cases"`
	NormSF [][2]float64 `json:"norm_sf"`
}

func loadPairedFixtures(t *testing.T) pairedFixtures {
	t.Helper()
	b, err := os.ReadFile("testdata/scipy_fixtures.json")
	if err != nil {
		t.Fatal(err)
	}
	var fx pairedFixtures
	if err := json.Unmarshal(b, &fx); err != nil {
		t.Fatal(err)
	}
	if len(fx.Cases) < 12 || fx.Provenance["scipy"] == "" || fx.Provenance["command"] == "" {
		t.Fatalf("fixtures incomplete: %d cases, provenance %v", len(fx.Cases), fx.Provenance)
	}
	return fx
}

// methodKind maps WilcoxonSignedRank's method string to the fixture's kind.
func methodKind(method string) string {
	switch {
	case strings.HasPrefix(method, "exact"):
		return "exact"
	case strings.HasPrefix(method, "normal approximation"):
		return "approx"
	case strings.HasPrefix(method, "none"):
		return "none"
	}
	return "unknown: " + method
}

func closeRel(got, want, rel float64) bool {
	return got == want || math.Abs(got-want) <= rel*math.Abs(want)
}
