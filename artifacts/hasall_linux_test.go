package artifacts

import (
	"fmt"
	"testing"
)

func setHasAllListFactor(t *testing.T, f int64) { setForTest(t, &hasAllListFactor, f) }

// TestHasAllListing: reading a fan-out directory whole takes several
// getdents(2) calls when the buffer is small, and looks up each entry
// whose type the file system does not report.
func TestHasAllListing(t *testing.T) {
	setLooseForTest(t) // the loose layout: pack_test.go tests packs
	setHasAllListFactor(t, 1<<40)
	oldBuf, oldTypes := hasAllBuf, hasAllNoTypes
	t.Cleanup(func() { hasAllBuf, hasAllNoTypes = oldBuf, oldTypes })
	for _, types := range []bool{false, true} {
		t.Run(fmt.Sprintf("noTypes=%v", types), func(t *testing.T) {
			hasAllBuf, hasAllNoTypes = 200, types // two or three entries per call
			testHasAll(t)
		})
	}
}
