//go:build !unix

package artifacts

import (
	"os"
	"time"
)

// staleTempAge is how old a temp file must be before GC treats it as
// abandoned on systems without flock. No single write takes this long.
const staleTempAge = time.Hour

func lockTemp(*os.File) error { return nil }

func removeIfAbandoned(path string, modTime time.Time) (bool, error) {
	if time.Since(modTime) < staleTempAge {
		return false, nil
	}
	if err := os.Remove(path); err != nil {
		return false, err
	}
	return true, nil
}
