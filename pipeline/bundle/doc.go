// Package bundle writes and reads THV's artifact bundles: one deterministic
// tar.gz that holds what a reviewer needs to check a reproduction bit for
// bit — the protocol, the lock, the results, a store with every artifact
// the lock's tasks output, the module's source, the OCI image (when given),
// a SHA256SUMS manifest and an RO-Crate (Workflow Run / Provenance Run
// Crate profiles) describing the run.
//
// Writing (Write) is deterministic: the same project and binary give the
// same bytes (sorted entries, fixed times, owners and modes, no host data).
// Reading (Extract) treats the archive as hostile: names that are absolute,
// climb with "..", or collide; links, devices and other special entries;
// entries or archives larger than the limits; and any file that the
// manifest does not list or whose SHA-256 differs are refused, naming the
// entry, and nothing is written outside the target directory.
//
// Like package pipeline, it knows nothing of the paper: the protocol file,
// the results and the source come from the caller.
package bundle
