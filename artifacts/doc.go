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
//	LOCK                         empty; flock'ed shared by a pipeline pass, exclusive by GC
//	objects/<2 hex>/<64 hex>     blobs, named by the hex SHA-256 of their bytes, mode 0444
//	index/<2 hex>/<64 hex>.json  one Entry per task key: kind, outputs (name, digest, size), meta
//	tmp/<name>.<hex>.tmp         files being written; renamed into objects/ or index/ when complete
//	corrupt/                     files that failed verification, moved here, never deleted
//
// The two-hex-digit fan-out directories (the first byte of the hash) keep
// directories small, as in the Go build cache. They are created on demand.
//
// # Boundaries
//
// [Open] in mode [Create] creates a store only in a missing or empty
// directory (or in what an interrupted creation left); it refuses any other
// directory without VERSION ([ErrNotStore]), so that an ordinary directory
// is never adopted and its files never garbage-collected. Mode [Existing]
// creates nothing at all and is for read-only commands; it works on a
// read-only store, where writes fail with [ErrReadOnly]. [Store.GC] removes
// only files the store creates,
// recognised by name and type (64-hex objects, 64-hex.json entries, its own
// temp-file names), never follows or removes a symbolic link, and counts
// what it left alone. Output names must be single safe path components
// ([CheckName]) in every entry written or read.
//
// The store follows no symbolic link inside its directory, and reaches
// nothing outside it: every read, write, rename, removal and mkdir (objects,
// entries, temp files, quarantine into corrupt/, fan-out directories,
// VERSION, LOCK) resolves its path from the open store directory without
// following a link in any component (openat2 with RESOLVE_BENEATH and
// RESOLVE_NO_SYMLINKS on Linux, an os.Root with an Lstat of each component
// elsewhere). A link on the path fails the operation with an
// error naming it: a `corrupt -> /etc` link leaves a corrupt file where it
// is (reported, never returned), a `tmp -> $HOME` link makes writes fail
// and GC leave it alone, an `objects/ab -> /srv` link is neither read nor
// written through. Only the path of the store directory itself is resolved
// the ordinary way, once, when the store is opened.
//
// A store that another process wrote, such as a worker's scratch store
// that the host imports from, is read through [Store.Untrusted]: a
// read-only view that never writes, moves, quarantines or removes anything,
// and reports a corrupt or non-regular file (a link, a hard link, a
// directory) as an error naming it, left in place.
//
// # Crash safety
//
// Every file is written to tmp/ and renamed into place, so a reader sees
// either no file or a complete one, even if the writer is killed at any
// instruction: a partial file can only ever be in tmp/. Durability against
// a power cut comes from a barrier, [Store.Sync] (syncfs(2)), not from an
// fsync of each file: the pipeline calls it before a lock is written or
// sealed and at the end of a pass. A file written since the last barrier
// may be lost, empty or garbage after a power cut; every object is
// re-hashed and every entry strictly decoded when read, and the first
// [Open] after the restart checks the whole store, setting aside what the
// cut tore (durable.go). Where there is no syncfs (not Linux), each write
// is fsynced as before. Writers hold an exclusive flock on their temp file while they write;
// [Open] and [Store.GC] remove only temp files with the store's own names
// whose lock they can take, that is, files whose writer has died. Objects
// are written before the index entry that names them, and [Store.PutEntry]
// refuses an entry whose outputs are absent, so a crash leaves at worst
// unreferenced objects, which GC removes.
//
// Files outside a store that must never be seen half-written (a lock file,
// results/, a bundle) are written the same way, by the same code:
// [WriteFileAtomic] puts the temp file beside the file, and
// [RemoveAbandonedTemps] is the sweeper of such directories.
//
// # Verification
//
// [Store.Get] and [Store.Verify] re-hash the object; an index entry is checked
// against its own file name and schema when read (a strict decoder, fuzzed:
// FuzzDecodeEntry). A file that fails, or anything other than a regular file
// in the place of an object or entry (a directory, a symbolic link), is moved
// to corrupt/ (never silently deleted, never returned; if it cannot be moved
// it stays, and every read reports it again) and reported with an
// error wrapping [ErrCorrupt] that names the digest or key and both paths; the
// caller then treats it as a miss and recomputes. A later [Store.Put] of the
// right bytes restores the object.
//
// # Concurrency
//
// A Store is safe for concurrent use by goroutines: every path is computed
// from the open store directory (one file descriptor, held for the Store's
// life), and its one piece of mutable state, its hold on the store lock, is
// guarded by a mutex. Put and PutEntry are safe across processes too (two
// writers of the same object rename identical bytes into place; the last
// rename wins, which is harmless).
//
// GC must not run while a pipeline pass writes and reads the store: an
// object written after the caller computed its keep set would be removed
// under the pass. The store lock (LOCK, flock(2)) prevents it: a pass holds
// [Store.LockShared] for its whole duration, and GC takes
// [Store.LockExclusive], which fails at once with [ErrLocked] while any pass
// holds the store (LockShared in turn waits up to 30 s for a GC to finish).
// The kernel releases the lock of a killed holder. Without flock (non-unix
// systems) the lock is a no-op.
//
// # Tables
//
// The Parquet encoding of the pipeline's tables lives in the subpackage
// thv/artifacts/table, so that code which only reads and writes tables (the
// stages) does not depend on the store.
package artifacts
