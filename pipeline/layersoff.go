package pipeline

import "strings"

// layersOff names no-op layers that this binary does without, to measure
// what each saves (docs/pipeline.md, "What each layer saves"). It is set
// only at link time, never at run time:
//
//	go build -ldflags "-X thv/pipeline.layersOff=stamps" -o /tmp/thv-nostamps ./cmd/thv
//
// Layers, comma-separated: seal (no lock is taken as sealed: every record
// is checked against the index), memo (code identities computed afresh),
// certificate (every pass plans), stamps (every output looked up).
var layersOff string

// layerOff reports whether layersOff names layer.
func layerOff(layer string) bool {
	if layersOff == "" {
		return false
	}
	for l := range strings.SplitSeq(layersOff, ",") {
		if l == layer {
			return true
		}
	}
	return false
}
