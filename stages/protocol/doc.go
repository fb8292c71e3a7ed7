// Package protocol is the paper's reproduction protocol on the generic
// engine (thv/pipeline): params.yaml loaded and validated into a Config,
// the stage kinds and their derived code identity, which tasks exist and
// how they connect, the paper's words once (task IDs, the proposed method,
// the names a reference may use), the project on a store and a lock, and
// the export of the tables and figures to results/.
//
// It assembles the pipeline and runs inside no task: no stage imports it,
// so it is in no task's code identity.
package protocol
