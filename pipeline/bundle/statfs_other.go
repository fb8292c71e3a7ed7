//go:build !(linux || darwin || freebsd)

package bundle

// statFS knows no file system here: the free space bounds nothing, and a
// full disk is reported when a write fails.
func statFS(string) (fsSpace, bool) { return fsSpace{}, false }

func isQuotaErr(error) bool { return false }
