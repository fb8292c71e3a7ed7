// Package thv is the root of the THV module; it only embeds the default
// experiment protocol, params.yaml, so that the thv binary runs the paper's
// reproduction with no file at hand.
package thv

import _ "embed"

// DefaultParams is the content of params.yaml at build time.
//
//go:embed params.yaml
var DefaultParams []byte
