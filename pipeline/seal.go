package pipeline

import (
	"crypto/sha256"

	"thv/artifacts"
)

// A lock file is a cache of facts, not a source of truth: a record says
// which outputs a key had, but the store's index says what they are. To
// keep the no-op path from reading thousands of index entries, the store
// keeps a seal for every lock file thv wrote after a complete pass: an
// index entry whose key is derived from the SHA-256 of the lock's bytes. A
// lock whose bytes have a seal in this store is exactly one that thv
// verified against this store's index; any other lock — edited by hand,
// taken from another machine, written by a pass that did not complete — has
// its records checked against the index one by one.

const sealKind = "lock-seal"

func sealKey(lock artifacts.Digest) artifacts.Key {
	return sha256.Sum256([]byte("thv lock seal v1\n" + lock.String()))
}

// sealed reports whether the store holds a seal for l's bytes.
func sealed(st *artifacts.Store, l *Lock) bool {
	if l == nil || l.digest.IsZero() {
		return false
	}
	_, ok := Seal(st, l.digest)
	return ok
}

// Seal returns the index key of the seal of the lock whose bytes have the
// given digest, and whether the store holds that seal (a bundle carries
// it, so that its extracted lock is one its store vouches for).
func Seal(st *artifacts.Store, lock artifacts.Digest) (artifacts.Key, bool) {
	k := sealKey(lock)
	e, ok, err := st.GetEntry(k)
	return k, err == nil && ok && e.Kind == sealKind && e.Meta["lock"] == lock.String()
}

// seal records in the store that l's bytes were verified against it.
func seal(st *artifacts.Store, l *Lock) error {
	return st.PutEntry(artifacts.Entry{Key: sealKey(l.digest), Kind: sealKind, Meta: map[string]string{"lock": l.digest.String()}})
}
