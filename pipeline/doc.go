// Package pipeline is a generic engine for content-hashed DAGs of pure
// tasks, modelled on the Go build cache: a task's key is the SHA-256 of a
// complete description of its computation (its kind, the code identity of
// the packages it runs, its canonical parameters and the digests of its
// inputs), outputs are stored by content digest in an artifacts.Store,
// and a pass runs only the tasks whose key is not yet in the store.
//
// It knows nothing of bandits or of any paper: a protocol (see
// thv/protocol) registers stage kinds ([Kind], [Kinds]: pure
// functions from parameters and input blobs to output blobs, whose code
// identity is derived from their package's imports by thv/pipeline/codeid),
// builds a [Plan] of [Task] values (a DAG, with tasks that expand once an
// upstream output is known) and brings it up to date with [Project.Repro].
//
// A [Runner] walks the plan: a task whose key is already recorded, with its
// outputs present in the store, is cached; any other is handed, as a
// serializable [Spec],
// to an [Executor] (in process by default; [Process] runs `thv exec-task`
// workers; other executors live in their own packages), and every executor
// ends in [Worker.Execute], which recomputes the code identity and the key
// before it runs anything. An input the store cannot provide is recovered by
// re-executing its producer, and a lock record the store's index disputes
// is settled by re-execution. The [Lock] file records every task's key and
// output digests, so that a fresh clone knows what its artifacts should be
// and [Project.Status] can explain what is stale; [Project.Verify]
// re-executes the lock's tasks into a scratch store and compares every
// output.
package pipeline
