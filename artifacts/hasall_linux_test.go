package artifacts

import "testing"

func setHasAllListFactor(t *testing.T, f int64) {
	old := hasAllListFactor
	hasAllListFactor = f
	t.Cleanup(func() { hasAllListFactor = old })
}
