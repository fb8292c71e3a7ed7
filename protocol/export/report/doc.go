// Package report renders results/index.html: one self-contained page of a
// reproduction (docs/report.md) — its provenance, the paper's tables, the
// comparison with the published values, the claims, the readings sweep's
// summary and the figures — from the same stored outputs as the LaTeX
// tables and Markdown reports. No task imports it: the page is written at
// export (protocol/export), outside anything hashed.
//
// The page is a deterministic function of its Page, except for one block,
// the run's (run.go: its date, executor, the thv that wrote it and what
// thv verify last showed), which no store output determines. That block
// has a fixed form, so that a checker can read its values back (ParseRun),
// put them into a fresh rendering (WithRun) and compare every byte.
//
// It writes HTML with fmt and html.EscapeString rather than html/template:
// html/template's reflection keeps the linker from dropping unused methods,
// 6 MB more binary (measured on thv), as pipeline/bundle's preview notes.
package report
