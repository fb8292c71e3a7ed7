package formats

import "thv/artifacts/table"

// EncodeTrajectory writes the trajectory table of a run, a run task's
// trajectory output (run.Trajectory): one row per round, with columns round (from 1) and
// hv (hv[t−1] = HV(S_t) on the true means).
func EncodeTrajectory(hv []float64) ([]byte, error) {
	rounds := make([]int64, len(hv))
	for t := range rounds {
		rounds[t] = int64(t + 1)
	}
	return encode("trajectory", table.Int64Column("round", rounds), table.Float64Column("hv", hv))
}

// DecodeTrajectory reads the hv column of a trajectory table, in round
// order.
func DecodeTrajectory(b []byte) ([]float64, error) {
	c := read("trajectory", b)
	hv := c.float64s("hv")
	return hv, c.check()
}
