package paretoucb_test

import (
	"testing"

	"thv/algos/algotest"
)

// BenchmarkSelect times whole runs and learned-state rounds of the family
// in the paper's d = 5 setting, η = 0.1.
func BenchmarkSelect(b *testing.B) {
	algotest.BenchmarkRuns(b, family, 0.1)
}
