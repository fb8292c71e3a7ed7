//go:build race

package pipeline

// raceEnabled: the test binary is built with the race detector, whose
// runtime maps terabytes of shadow address space at start.
const raceEnabled = true
