package codeid

import (
	"runtime/debug"
	"strings"
)

// WithGoSumHashes returns mods with the hash of each module that lacks one
// taken from gosum, the main module's go.sum: a binary built with
// -mod=vendor records its modules' versions (from vendor/modules.txt) but
// not their hashes. go.sum holds, for each version, the hash of the module
// the go command checks on download, which is what a build from the module
// cache records: both builds then compute the same identities. A module
// whose version go.sum does not name stays without a hash, and an identity
// that reaches it is an error naming it (Identity).
func WithGoSumHashes(mods []*debug.Module, gosum []byte) []*debug.Module {
	sums := GoSumHashes(gosum)
	out := make([]*debug.Module, len(mods))
	for i, m := range mods {
		out[i] = m
		if m == nil || m.Sum != "" || m.Replace != nil {
			continue
		}
		if sum, ok := sums[m.Path+" "+m.Version]; ok {
			c := *m
			c.Sum = sum
			out[i] = &c
		}
	}
	return out
}

// GoSumHashes maps "path version" to the go.sum hash of that module's
// files (the lines for its go.mod file left out).
func GoSumHashes(gosum []byte) map[string]string {
	out := map[string]string{}
	for line := range strings.SplitSeq(string(gosum), "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && !strings.HasSuffix(f[1], "/go.mod") {
			out[f[0]+" "+f[1]] = f[2]
		}
	}
	return out
}
