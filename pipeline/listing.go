package pipeline

import "thv/artifacts"

// Listing is one listing of a store's objects shared by the no-op checks
// of several projects on that store in one process (thv readings: a
// protocol per instance, whose outputs together are most of the store),
// made once, in the background. A check uses it only while it holds. Objects leave a store by gc, which cannot run while the process
// holds the store's shared lock (the caller takes it before NewListing and
// keeps it until its last pass), and by quarantine, which changes the
// store's quarantine state: the listing records the state it was made
// under and is not used once the state differs. Objects written since are
// not in it, and a check looks up what the listing lacks (HasAll).
type Listing struct {
	store      *artifacts.Store
	done       chan struct{}
	listed     *artifacts.DigestSet
	quarantine string
	err        error
}

// NewListing starts listing st's objects.
func NewListing(st *artifacts.Store) *Listing {
	l := &Listing{store: st, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		if l.quarantine, l.err = st.QuarantineState(); l.err == nil {
			l.listed, l.err = st.ObjectSet()
		}
	}()
	return l
}

// objects returns the listing if it still holds for st.
func (l *Listing) objects(st *artifacts.Store) (*artifacts.DigestSet, bool) {
	if l == nil || l.store != st {
		return nil, false
	}
	<-l.done
	if l.err != nil || l.listed == nil {
		return nil, false
	}
	q, err := st.QuarantineState()
	return l.listed, err == nil && q == l.quarantine
}
