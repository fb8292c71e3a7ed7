// Package protocol is the paper's reproduction protocol on the generic
// engine (thv/pipeline): params.yaml loaded and validated into a Config
// (config.go), the stage kinds and their derived code identity (kinds.go),
// which tasks exist and how they connect (plan.go, figures.go), the project
// on a store and a lock (project.go), and the export of the tables and
// figures to results/ (results.go).
//
// It assembles the pipeline and runs inside no task: no stage imports it,
// so it is in no task's code identity.
package protocol
