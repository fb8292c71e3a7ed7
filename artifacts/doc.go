// Package artifacts is the content-addressed store of the THV pipeline.
//
// The model is Go's build cache (cmd/go/internal/cache): the pipeline hashes
// everything a task depends on into a [Key] (kind, code fingerprint, canonical
// params, input digests) and stores each output blob under its [Digest], the
// SHA-256 of its bytes. An index entry maps a key to its named outputs. A no-op
// rerun therefore costs one small JSON read ([Store.GetEntry]) and one stat per
// output ([Store.Has]); nothing is re-hashed on that path.
//
// # Layout on disk
//
// A store is a directory (the CLI uses .thv/):
//
//	VERSION                      "thv-store 1": layout version, checked by Open
//	objects/<2 hex>/<64 hex>     blobs, named by the hex SHA-256 of their bytes, mode 0444
//	index/<2 hex>/<64 hex>.json  one Entry per task key: kind, outputs (name, digest, size), meta
//	tmp/                         files being written; renamed into objects/ or index/ when complete
//	corrupt/                     files that failed verification, moved here, never deleted
//
// The two-hex-digit fan-out directories (the first byte of the hash) keep
// directories small, as in the Go build cache. They are created on demand.
//
// # Crash safety
//
// Every file is written to tmp/, fsynced, renamed into place and its directory
// fsynced, so a reader sees either no file or a complete one, even if the
// writer is killed at any instruction: a partial file can only ever be in
// tmp/. Writers hold an exclusive flock on their temp file while they write;
// [Store.GC] removes only temp files whose lock it can take, that is, files
// whose writer has died. Objects are written before the index entry that
// names them, and [Store.PutEntry] refuses an entry whose outputs are absent,
// so a crash leaves at worst unreferenced objects, which GC removes.
//
// # Verification
//
// [Store.Get] and [Store.Verify] re-hash the object; an index entry is checked
// against its own file name and schema when read. A file that fails is moved
// to corrupt/ (never silently deleted, never returned) and reported with an
// error wrapping [ErrCorrupt] that names the digest or key and both paths; the
// caller then treats it as a miss and recomputes. A later [Store.Put] of the
// right bytes restores the object.
//
// # Concurrency
//
// A Store holds no mutable state: all paths are computed from the root, so it
// is safe for concurrent use by goroutines, and Put and PutEntry are safe
// across processes (two writers of the same object rename identical bytes into
// place; the last rename wins, which is harmless). GC should run when no
// pipeline is writing: an object written by another process after the caller
// computed its keep set is not in that set and will be removed, which shows up
// later as a cache miss, never as wrong data.
//
// # Tables
//
// The Parquet encoding of the pipeline's tables lives in the subpackage
// thv/artifacts/table, so that code which only reads and writes tables (the
// stages) does not depend on the store.
package artifacts
