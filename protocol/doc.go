// Package protocol is the paper's reproduction protocol on the generic
// engine (thv/pipeline): the stage kinds and their derived code identity,
// which tasks exist and how they connect, the paper's words once (task
// IDs, the names a reference may use), and the project on a store and a
// lock. The configuration is protocol/config's; what a pass leaves in
// results/ is protocol/export's.
//
// It assembles the pipeline and runs inside no task: no stage imports it,
// so it is in no task's code identity.
package protocol
