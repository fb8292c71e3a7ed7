// Package formats defines the data that more than one stage kind reads or
// writes: the Parquet layouts of their outputs, each with a typed row
// struct and Encode/Decode functions, and the description of a setting
// that several kinds receive in their parameters.
//
// Every layout is an ordinary columnar table (thv/artifacts/table): one
// column per field or objective, one row per arm, round, run, η, cell,
// test or drawn point of a figure. The column names, types and order are
// part of the artifacts' digests: change them and every downstream digest
// changes.
//
// The package is deliberately free of the science packages (hv, envs,
// algos): its structs are plain, and the kinds that compute convert them to
// and from envs and algos types, so that kinds which only move numbers
// around (select, collect, summarize, tables, figures) do not depend on the
// science code.
package formats
