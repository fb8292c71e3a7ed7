// Package pipeline is a generic engine for content-hashed DAGs of pure
// tasks, modelled on the Go build cache: a task's key is the SHA-256 of a
// complete description of its computation (its kind, the code identity of
// the packages it runs, its canonical parameters and the digests of its
// inputs), outputs are stored by content digest, and a pass runs only the
// tasks whose key is not yet in the store.
//
// It knows nothing of bandits or of any paper: a protocol (see
// thv/stages/protocol) registers stage kinds, builds a Plan of Tasks and
// calls Project.Repro. The pieces, one file each:
//
//   - task.go: Task, Dep and Plan, the DAG (with tasks that expand once an
//     upstream output is known);
//   - kind.go: Kind and Kinds, the registry of stage computations and their
//     derived code identity (thv/pipeline/codeid);
//   - key.go: key preimages and keys;
//   - spec.go: Spec, the serializable description of one task execution;
//   - executor.go: the Executor seam and Worker, which executes specs
//     against a store (shared by every executor and by `thv exec-task`);
//   - local.go, process.go: the in-process and subprocess executors;
//   - scheduler.go: the pass over the DAG (Runner), with early cutoff and
//     recovery of lost inputs by re-executing their producers;
//   - explain.go: why a task is stale;
//   - lock.go: the lock file; project.go: Repro, Status and GC;
//   - progress.go: the progress bar and ETA.
package pipeline
