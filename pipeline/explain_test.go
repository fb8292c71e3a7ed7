package pipeline

import (
	"fmt"
	"testing"

	"thv/pipeline/codeid"
)

// TestExplainCode: a stale task's reason names the units of its code
// identity that the lock records with another hash or not at all, the
// first few of them, and how many more.
func TestExplainCode(t *testing.T) {
	id := &codeid.Identity{Digest: "sha256:x"}
	lock := &Lock{Code: map[string]string{}}
	for i := range 10 {
		u := codeid.Unit{Name: fmt.Sprintf("thv/p.F%d", i), Hash: "new"}
		id.Units = append(id.Units, u)
		if i%2 == 1 {
			lock.Code[u.Name] = "new"
		} else if i > 0 {
			lock.Code[u.Name] = "old"
		}
	}
	s := &pass{Runner: &Runner{Lock: lock}}
	if got, want := s.explainCode(id), "code changed in thv/p.F0, thv/p.F2, thv/p.F4, thv/p.F6, thv/p.F8"; got != want {
		t.Errorf("explainCode = %q, want %q", got, want)
	}
	for i := range 10 {
		id.Units = append(id.Units, codeid.Unit{Name: fmt.Sprintf("thv/q.G%d", i), Hash: "h"})
	}
	id.Digest = "sha256:y"
	if got, want := s.explainCode(id), "code changed in thv/p.F0, thv/p.F2, thv/p.F4, thv/p.F6, thv/p.F8, thv/q.G0, and 9 more"; got != want {
		t.Errorf("explainCode = %q, want %q", got, want)
	}
	lock.Code = map[string]string{}
	if got := s.explainCode(&codeid.Identity{Digest: "sha256:z"}); got != "" {
		t.Errorf("an identity with no unit changed: %q", got)
	}
}
