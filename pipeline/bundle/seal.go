package bundle

import (
	"crypto/sha256"

	"thv/artifacts"
)

// The lock's seal (pipeline/seal.go) is an index entry whose key derives
// from the SHA-256 of the lock's bytes: with it in the bundle's store, the
// extracted lock is the one the store vouched for. The key is derived here
// as pipeline derives it; should the two drift, the entry is not found and
// the bundle merely holds no seal (a lock without one is checked record
// by record), and TestBundleHoldsTheSeal fails.

func sealKey(lock artifacts.Digest) artifacts.Key {
	return sha256.Sum256([]byte("thv lock seal v1\n" + lock.String()))
}

// seal returns the key of the seal of the lock with the given digest, if
// the store holds it.
func seal(st *artifacts.Store, lock artifacts.Digest) (artifacts.Key, bool) {
	k := sealKey(lock)
	e, ok, err := st.GetEntry(k)
	return k, err == nil && ok && e.Kind == "lock-seal" && e.Meta["lock"] == lock.String()
}
