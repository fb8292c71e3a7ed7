package export

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"thv/artifacts"
)

// What thv verify last showed, for the page's run block: thv verify
// records its verdict in the store's log (beside the run log, outside
// anything hashed) with the digest of the lock it checked; the page shows
// it only while that lock is the project's.

func (p *Project) verifyLog() string {
	return filepath.Join(p.Store.Root(), "log", "verify-"+p.Config.Profile+".txt")
}

// RecordVerify records summary (one line) as what thv verify showed of the
// project's current lock. A failure to write it is returned for a warning.
func (p *Project) RecordVerify(summary string) error {
	lock, err := os.ReadFile(p.LockPath)
	if err != nil {
		return err
	}
	dir := filepath.Dir(p.verifyLog())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	line := strings.Join(strings.Fields(summary), " ")
	return artifacts.WriteFileAtomic(p.verifyLog(), fmt.Appendf(nil, "%s\n%s\n", artifacts.Sum(lock), line))
}

// lastVerify is the summary RecordVerify recorded of the lock whose
// SHA-256 is lockDigest, or "".
func (p *Project) lastVerify(lockDigest string) string {
	b, err := os.ReadFile(p.verifyLog())
	if err != nil || len(b) > 4096 {
		return ""
	}
	digest, summary, _ := strings.Cut(strings.TrimSuffix(string(b), "\n"), "\n")
	if digest != lockDigest {
		return ""
	}
	return summary
}
