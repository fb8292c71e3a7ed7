package pipeline

import (
	"crypto/sha256"
	"errors"

	"thv/artifacts"
	"thv/pipeline/codeid"
)

// A code identity depends only on the binary: its embedded sources and the
// code that reads them. Computing one scans every package of its closure
// with go/scanner and splits it into declarations, about 10 ms of CPU for
// the pipeline's roots, and every process would pay it again. So the store
// keeps, for each binary, a memo of the packages that binary read (codeid's
// Memo: for each package, the SHA-256 of its files, its imports and its
// declarations), and a pass of the same binary takes them from there
// (codeid's Seeded).
//
// The memo is an index entry under a key derived from the binary's Go build
// ID, which the go command computes from the binary's inputs and contents,
// with the memo as its one object. It is checked before it is used: the
// object is re-hashed when read (a damaged one is quarantined and the memo
// recomputed), the entry and the memo must both name this build ID, the
// memo must name this module and toolchain and be well formed throughout,
// and a package is taken only if its files, read now, have the SHA-256 the
// memo recorded and the packages it imports the names it gave them. A memo
// that fails any check is not used and is replaced by the pass's own.
//
// What only recomputing could catch is a memo whose hashes were forged by
// someone who can write the store — who could as well forge its index
// entries, which map keys to outputs. Like a seal (seal.go), a memo is this
// machine's cache, never evidence: a pass that honours no seal (Verify,
// verify-bundle) uses no memo either and computes every identity itself, so
// a forged memo shows there as changed code; and a worker process (of the
// process and container executors) computes its own identities, so a task
// it executes under a forged memo's key fails the worker's key check.
//
// A repro writes the memo after a complete pass (when it would seal its
// lock), if it read a package the store's memo did not have; a
// dry run, a pass with failures and a read-only store write none, and a
// read-only store still serves its memo. gc keeps the running binary's
// memo and removes those of other binaries, as it removes the seals of
// other locks.

const memoKind = "code-memo"

func memoKey(binary string) artifacts.Key {
	return sha256.Sum256([]byte("thv code memo v1\n" + binary))
}

// binaryModule returns kinds' code source if it is a codeid Module that
// knows its binary's build ID.
func (k *Kinds) binaryModule() (*codeid.Module, bool) {
	if k == nil {
		return nil, false
	}
	m, ok := k.code.(*codeid.Module)
	return m, ok && m.Binary() != ""
}

// memoised returns kinds whose code identities take packages from the
// store's memo of this binary when it has one that passes the checks, or
// else kinds itself.
func (k *Kinds) memoised(st *artifacts.Store) *Kinds {
	m, ok := k.binaryModule()
	if !ok || layerOff("memo") {
		return k
	}
	e, found, err := st.GetEntry(memoKey(m.Binary()))
	if err != nil || !found || e.Kind != memoKind || e.Meta["binary"] != m.Binary() || len(e.Outputs) != 1 {
		return k
	}
	data, err := st.Get(e.Outputs[0].Digest)
	if err != nil {
		return k
	}
	seeded, err := m.Seeded(data)
	if err != nil {
		return k
	}
	return &Kinds{code: seeded, byName: k.byName}
}

// saveMemo writes the memo of kinds' code to the store if the pass read a
// package that the store's memo did not have. A read-only store is
// not an error: it keeps no memo.
func (k *Kinds) saveMemo(st *artifacts.Store) error {
	m, ok := k.binaryModule()
	if !ok {
		return nil
	}
	data, computed := m.Memo()
	if !computed {
		return nil
	}
	d, err := st.Put(data)
	if err == nil {
		err = st.PutEntryLoose(artifacts.Entry{
			Key:     memoKey(m.Binary()),
			Kind:    memoKind,
			Outputs: []artifacts.Output{{Name: "memo.json", Digest: d, Size: int64(len(data))}},
			Meta:    map[string]string{"binary": m.Binary()},
		})
	}
	if errors.Is(err, artifacts.ErrReadOnly) {
		return nil
	}
	return err
}

// keepMemo adds the running binary's memo to what gc keeps.
func (k *Kinds) keepMemo(st *artifacts.Store, keep map[artifacts.Digest]bool, keepKeys map[artifacts.Key]bool) {
	m, ok := k.binaryModule()
	if !ok {
		return
	}
	key := memoKey(m.Binary())
	if e, found, err := st.GetEntry(key); err == nil && found {
		keepKeys[key] = true
		for _, o := range e.Outputs {
			keep[o.Digest] = true
		}
	}
}
