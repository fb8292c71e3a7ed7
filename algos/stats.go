package algos

// Stats holds the per-arm pull counts and empirical mean vectors. Policies
// embed it to get Observe for free.
//
// Count and Mean may be set directly to put a policy in a given state. A
// policy may keep state derived from them between rounds (the empirical
// front), updated from the arms Observe reports as changed (Observed): a
// change made directly after the policy's first Select must be declared
// with Touch.
type Stats struct {
	Count []int       // N_i: pulls of arm i so far
	Mean  [][]float64 // μ̂_i: empirical mean of arm i (zero before its first pull)

	changed []int // arms changed since the last Observed, repeats allowed
	all     bool  // more changes than changed holds: every arm may have changed
}

// NewStats returns empty statistics for n arms with d objectives.
func NewStats(n, d int) Stats {
	s := Stats{Count: make([]int, n), Mean: make([][]float64, n), changed: make([]int, 0, n)}
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
		s.Touch(i)
	}
}

// Touch declares that arm i's statistics changed other than by Observe.
func (s *Stats) Touch(i int) {
	if len(s.changed) < cap(s.changed) {
		s.changed = append(s.changed, i)
	} else {
		s.all = true // the initialisation's rounds, between Selects
	}
}

// Observed returns the arms whose statistics changed since its last call
// (repeats allowed; the slice is valid until the next Observe or Touch),
// or all = true when it cannot tell, and starts a new record.
func (s *Stats) Observed() (arms []int, all bool) {
	arms, all = s.changed, s.all
	s.changed, s.all = s.changed[:0], false
	return arms, all
}
