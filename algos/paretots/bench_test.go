package paretots

import (
	"testing"

	"thv/algos/algotest"
)

// BenchmarkSelect times whole runs and learned-state rounds of the family
// in the paper's d = 5 setting.
func BenchmarkSelect(b *testing.B) {
	algotest.BenchmarkRuns(b, []string{"ParetoTS", "ParetoTS+"}, 0)
}
