//go:build !unix

package slurmtest

// sweepStale: the test cluster runs on unix systems only.
func sweepStale(string, []string) {}
