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
// its records checked against the index one by one. A seal also records
// what the store had set aside in corrupt/ when it was made: once anything
// more is quarantined (an index entry of the lock's tasks, say), the seal
// no longer holds and the next pass reads the index again, which recreates
// what was lost. Verification (Verify, verify-bundle) honours no seal: a
// seal's key is a plain hash anyone can compute, so a seal is a cache of
// this machine's own checks, never evidence.

const sealKind = "lock-seal"

func sealKey(lock artifacts.Digest) artifacts.Key {
	return sha256.Sum256([]byte("thv lock seal v1\n" + lock.String()))
}

// sealed reports whether the store holds a seal for l's bytes, made when
// corrupt/ held what it holds now.
func sealed(st *artifacts.Store, l *Lock) bool {
	if l == nil || l.digest.IsZero() || layerOff("seal") {
		return false
	}
	e, ok, err := st.GetEntry(sealKey(l.digest))
	if err != nil || !ok || e.Kind != sealKind || e.Meta["lock"] != l.digest.String() {
		return false
	}
	q, err := st.QuarantineState()
	return err == nil && e.Meta["quarantine"] == q
}

// seal records in the store that l's bytes were verified against it.
func seal(st *artifacts.Store, l *Lock) error {
	q, err := st.QuarantineState()
	if err != nil {
		return err
	}
	meta := map[string]string{"lock": l.digest.String()}
	if q != "" {
		meta["quarantine"] = q
	}
	return st.PutEntryLoose(artifacts.Entry{Key: sealKey(l.digest), Kind: sealKind, Meta: meta})
}
