// Package remote is the second level of the artifact store: a cache of
// index entries and objects on object storage (s3://bucket/prefix, any
// S3-compatible service, or file:///dir), shared by machines that have no
// common file system: a CI runner, a laptop, a cluster.
//
// The local store (package artifacts) stays the first level. On a local
// miss the pipeline asks the remote ([Remote.Fetch]): the index entry is
// downloaded, used only if it is signed by a trusted ed25519 key (the trust
// rule of Nix's binary caches, not Bazel's trust-the-cache), and every
// object it names is downloaded and re-hashed before it is put in the local
// store; anything else (no entry, an unsigned or wrongly signed one, an
// object that does not hash to its name, a server that does not answer)
// means the task is computed, and the reason is logged. After a task
// executes, [Remote.Publish] uploads its objects first and its signed entry
// last, so that a reader never sees an entry whose objects are missing.
// A remote opened without a signing key is read-only.
//
// The remote URL is a setting of the store, like its directory: it enters
// no task key and nothing in thv.lock.
//
// # Layout
//
//	<prefix>/objects/<2 hex>/<64 hex>      object bytes, named by their SHA-256
//	<prefix>/index/<2 hex>/<64 hex>.json   a signed envelope (envelope.go) around the
//	                                       exact bytes of the local index entry
//	<prefix>/packs/<64 hex>.pack           objects, concatenated, zstd; named by the
//	                                       SHA-256 of the file (batch.go)
//	<prefix>/batches/<64 hex>.batch        signed envelopes of many entries and where
//	                                       their objects lie in packs; zstd JSON, named
//	                                       by the SHA-256 of the file (batch.go)
//
// Publish (after each task of a run) writes objects/ and index/; thv push
// writes packs/ and batches/ (a few requests for a whole lock); Fetch and
// thv pull read both. Each file is written with one PUT (or one rename for
// file://), so it is visible whole or not at all; a batch is written after
// the packs it names, an entry after its objects. Objects and packs carry
// no signature: they are content-addressed and re-hashed on every
// download (a pack against its name, then each object in it against its
// digest); a batch vouches for nothing, each envelope in it is checked on
// its own.
//
// # Files
//
//	backend.go   the Backend interface and Open (URL → backend)
//	file.go      file:// backend
//	s3.go        s3:// backend (aws-sdk-go-v2, the standard AWS environment)
//	retry.go     retries with exponential backoff, a per-attempt timeout, errors naming the URL
//	keys.go      ed25519 key pairs and trusted-key lists
//	envelope.go  signing and verifying index entries
//	remote.go    Remote: read-through Fetch and write-after Publish
//	sync.go      Push and Pull of what a lock references, in parallel, resumable
//	batch.go     packs and batches: their format, reading them (checked), Fetch from them
//	gc.go        GC of the remote with a grace period
package remote
