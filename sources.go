package thv

import "embed"

// Sources is the source tree of the packages whose code decides the
// pipeline's artifacts (hv, envs, algos, stages, artifacts and everything
// below them), embedded at build time. The pipeline derives a task's code
// identity from it (package thv/pipeline/codeid: the import closure of the
// task's packages, hashed from these files, plus the third-party modules of
// ThirdParty and the toolchain), so an identity always describes the code
// actually compiled into the running binary and can never go stale.
//
// The directories are embedded whole, recursively. go:embed leaves out files
// and directories whose names begin with "_" or "." — which the go command
// ignores too, so they are never compiled — and embeds test files and
// testdata, which codeid skips. Data files read through //go:embed by a
// fingerprinted package would lie outside the identity;
// TestIdentityMatchesGoList fails if there is one. A package that the
// fingerprinted code imports from outside these directories makes codeid
// fail, naming it: add its directory here.
//
//go:embed hv envs algos stages artifacts
var Sources embed.FS

// Module is the module's source, embedded so that `thv bundle` can put
// into a bundle the very source its binary was built from, for a reviewer
// to rebuild thv and compare. Test data of cmd/thv beyond its fuzz corpus
// and consumer scripts (node_modules, when installed) is left out; so is
// thv.lock, which a bundle carries as its own lock.
//
//go:embed go.mod go.sum Makefile README.md params.yaml .gitignore .ci/run *.go
//go:embed cmd/thv/*.go cmd/thv/testdata/*.yaml cmd/thv/testdata/fuzz cmd/thv/testdata/consumers/package.json cmd/thv/testdata/consumers/package-lock.json cmd/thv/testdata/consumers/*.mjs
//go:embed pipeline hv envs algos stages artifacts internal docs reference
var Module embed.FS
