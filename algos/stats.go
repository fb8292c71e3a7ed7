package algos

// Stats holds the per-arm pull counts and empirical mean vectors. Policies
// embed it to get Observe for free.
type Stats struct {
	Count []int       // N_i: pulls of arm i so far
	Mean  [][]float64 // μ̂_i: empirical mean of arm i (zero before its first pull)
}

// NewStats returns empty statistics for n arms with d objectives.
func NewStats(n, d int) Stats {
	s := Stats{Count: make([]int, n), Mean: make([][]float64, n)}
	flat := make([]float64, n*d)
	for i := range s.Mean {
		s.Mean[i] = flat[i*d : (i+1)*d : (i+1)*d]
	}
	return s
}

// Observe folds the rewards of the played arms into the running means.
func (s *Stats) Observe(slate []int, rewards [][]float64) {
	for a, i := range slate {
		s.Count[i]++
		inv := 1 / float64(s.Count[i])
		m := s.Mean[i]
		for j, x := range rewards[a] {
			m[j] += float64((x - m[j]) * inv)
		}
	}
}
