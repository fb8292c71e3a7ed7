// Package table is the in-memory form of the pipeline's tabular artifacts
// and their deterministic Parquet encoding.
//
// A [Table] is a list of flat, required columns of int64, float64 or string.
// [Encode] writes it with fixed settings (Zstandard compression, PLAIN for
// numbers, dictionary for strings, data page v1, page statistics, one row
// group per [RowGroupRows] rows, a constant created_by, no key/value metadata),
// so equal tables give byte-identical files and hence equal digests, which is
// what lets the pipeline cut off reruns early. NaN is allowed and canonicalised
// to one bit pattern (that of math.NaN) because different NaN payloads are the
// same value to every consumer; -0 and ±Inf are kept as they are. [Decode]
// reads such files back, and rejects a damaged one with an error, never a
// panic.
//
// The package knows nothing of the store (thv/artifacts) nor of what the
// columns mean (thv/stages/formats).
package table
