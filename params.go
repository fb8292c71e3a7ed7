// Package thv is the root of the THV module; it embeds the default
// experiment protocol, params.yaml, and the paper's published values,
// reference/paper.yaml, so that the thv binary runs the paper's
// reproduction and its comparison with no file at hand.
package thv

import _ "embed"

// DefaultParams is the content of params.yaml at build time.
//
//go:embed params.yaml
var DefaultParams []byte

// PaperReference is the content of reference/paper.yaml at build time: the
// values and claims of the paper that the compare stage checks ours
// against (docs/compare.md).
//
//go:embed reference/paper.yaml
var PaperReference []byte
