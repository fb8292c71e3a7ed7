// Package container runs pipeline tasks inside an OCI container: the image
// (FROM scratch, the static thv binary and nothing else, built
// reproducibly with go-containerregistry), the runtimes that run it (runc
// driven directly with a runtime-spec config; podman and docker through
// their CLIs) and the executor that sends task specs to `thv exec-task`
// workers inside containers.
//
// Every container has the same confinement, whatever the runtime
// (docs/containers.md): no network, a read-only root filesystem, the
// project store mounted read-only at /store, one writable scratch store at
// /out (a tmpfs of bounded size, nosuid, nodev, noexec), no capabilities,
// no new privileges, an unprivileged user, a seccomp allowlist, and memory
// and pids limits. A worker lost at a limit fails its task with an error
// that names the task and the limit. The host imports each task's outputs
// from /out into the project store (pipeline.ImportOutputs), re-hashing
// every byte: nothing a container writes reaches the store unchecked.
//
// Which image ran a task is provenance, never part of its key: the same
// code gives the same outputs whatever runs it, and the tests hold every
// executor to the local executor's lock byte for byte.
package container
