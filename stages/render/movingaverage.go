package render

// MovingAverage returns the trailing moving average of x with window w:
// out[t] is the mean of x[t−w+1..t], and of x[0..t] while t < w−1 (the rounds
// available). w ≤ 1 returns a copy of x.
func MovingAverage(x []float64, w int) []float64 {
	out := make([]float64, len(x))
	if w < 1 {
		w = 1
	}
	for t := range x {
		lo := max(0, t-w+1)
		s := 0.0
		for _, v := range x[lo : t+1] {
			s += v
		}
		out[t] = s / float64(t+1-lo)
	}
	return out
}
