//go:build !amd64 || amd64.v3

package stats

// Elsewhere montanaflynn's own code is fused: the owned functions agree
// with it within 2 ulps.
const exactOwned = false
