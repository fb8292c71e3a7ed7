//go:build amd64 && !amd64.v3

package stats

// On amd64 below GOAMD64=v3 the compiler fuses nothing, so montanaflynn's
// functions give the owned ones' bits exactly.
const exactOwned = true
