package run

import (
	"container/list"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"sync"
)

// simulations keeps the simulated runs of this process for the task that
// does the same run again: a figure's run (a twin of a run, the same
// parameters keeping its trajectory; docs/pipeline.md) simulates what its
// plain run already did, and in one process the second of the pair then
// costs only its encoding. A key covers everything the outputs depend on
// (simulationKey); entries are kept oldest first within a byte budget, and
// an entry is dropped once the second of its pair has taken it, which
// no third task needs. A run asked for while the same run is simulating
// waits for it instead of simulating it twice.
type simulations struct {
	mu       sync.Mutex
	byKey    map[string]*list.Element // of *simulation
	oldest   list.List                // the entries, oldest first
	bytes    int                      // the sizes of the finished entries
	maxBytes int

	hits, misses int // how often a run was taken from the memo, or simulated
}

// simulation is one simulated run: done is closed once summary, hv and err
// are set, after which they are only read.
type simulation struct {
	key     string
	done    chan struct{}
	summary []byte    // the encoded summary, the same bytes for both tasks of a pair
	hv      []float64 // HV(S_t), for the trajectory
	err     error
	size    int  // its bytes in the budget
	counted bool // whether size is in the budget yet (guarded by the memo's mu)
}

// maxSimulationBytes bounds the memo. A twin runs after its setting's
// statistics, so after every run of its setting and some of the next (the
// executor takes the costliest first): in the paper pass, -j 2, every
// twin still found its run with 92 MiB kept; this leaves a margin.
const maxSimulationBytes = 128 << 20

// simulationKey is a digest of what a run's outputs depend on: its
// parameters except whether it keeps its trajectory (the only difference
// between a run and its twin) and its inputs' bytes.
func simulationKey(p Params, instance, benchmark []byte) (string, error) {
	p.Trajectory = false
	params, err := json.Marshal(p) // maps are encoded in key order
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, part := range [][]byte{params, instance, benchmark} {
		h.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(part))))
		h.Write(part)
	}
	return string(h.Sum(nil)), nil
}

// do returns the simulation of key: the memo's, or simulate's, which it
// then keeps. A failed simulation is not kept (the next asks again).
func (c *simulations) do(key string, simulate func() ([]byte, []float64, error)) (*simulation, error) {
	c.mu.Lock()
	if el, ok := c.byKey[key]; ok {
		s := el.Value.(*simulation)
		c.remove(el)
		c.hits++
		c.mu.Unlock()
		<-s.done
		if s.err == nil {
			return s, nil
		}
		// Its simulation failed (a cancelled task): try again, unshared.
		sum, hv, err := simulate()
		return &simulation{summary: sum, hv: hv}, err
	}
	if c.byKey == nil {
		c.byKey = map[string]*list.Element{}
	}
	s := &simulation{key: key, done: make(chan struct{})}
	el := c.oldest.PushBack(s)
	c.byKey[key] = el
	c.misses++
	c.mu.Unlock()

	s.summary, s.hv, s.err = simulate()
	s.size = len(key) + len(s.summary) + 8*len(s.hv) + 200 // with the bookkeeping's
	close(s.done)

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byKey[key] != el { // taken by its pair's other task meanwhile
		return s, s.err
	}
	if s.err != nil {
		c.remove(el)
		return s, s.err
	}
	c.bytes += s.size
	s.counted = true
	for c.bytes > c.maxBytes {
		c.remove(c.oldest.Front())
	}
	return s, nil
}

// remove drops an entry; c.mu is held.
func (c *simulations) remove(el *list.Element) {
	s := c.oldest.Remove(el).(*simulation)
	delete(c.byKey, s.key)
	if s.counted {
		c.bytes -= s.size
	}
}
