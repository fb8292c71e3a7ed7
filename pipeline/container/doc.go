// Package container runs pipeline tasks inside an OCI container: the image
// (FROM scratch, the static thv binary and nothing else, built
// reproducibly with go-containerregistry), the runtimes that run it (runc
// driven directly with a runtime-spec config; podman and docker through
// their CLIs) and the executor that sends task specs to `thv exec-task`
// workers inside containers.
//
// Every container has no network, a read-only root filesystem, the
// project store mounted read-only at /store, one writable scratch store at
// /out, no capabilities, no new privileges and an unprivileged user. The
// host imports each task's outputs from /out into the project store
// (pipeline.ImportOutputs), re-hashing every byte: nothing a container
// writes reaches the store unchecked.
//
// Which image ran a task is provenance, never part of its key: the same
// code gives the same outputs whatever runs it, and the tests hold every
// executor to the local executor's lock byte for byte.
package container
