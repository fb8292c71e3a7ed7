package thv

import "embed"

// Sources is the Go source of the packages whose code decides the pipeline's
// artifacts, embedded at build time. The pipeline fingerprints a task's code
// from it, so a fingerprint always describes the code that is actually
// compiled into the running binary and can never go stale.
//
//go:embed hv/*.go envs/*.go algos/*.go algos/*/*.go stages/*.go
var Sources embed.FS
