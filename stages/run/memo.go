package run

import (
	"encoding/binary"
	"math"
	"sync"

	"thv/algos"
	"thv/envs"
)

// memo keeps decoded inputs by their bytes. The thousands of run tasks of a
// pass read the same few instances and benchmarks (one pair per setting
// and geometry); decoding each Parquet file once per process instead of
// once per task saves about a fifth of a millisecond per run. Keys are the
// whole content, so a hit is the same bytes the task was given (already
// verified by the worker); values are shared and only read.
type memo[T any] struct {
	mu sync.Mutex
	m  map[string]T
}

// memoSize bounds a memo: past it, it starts again from empty.
const memoSize = 64

func (c *memo[T]) decode(f func([]byte) (T, error)) func([]byte) (T, error) {
	return func(b []byte) (T, error) {
		c.mu.Lock()
		v, ok := c.m[string(b)]
		c.mu.Unlock()
		if ok {
			return v, nil
		}
		v, err := f(b)
		if err != nil {
			return v, err
		}
		c.mu.Lock()
		if c.m == nil || len(c.m) >= memoSize {
			c.m = make(map[string]T)
		}
		c.m[string(b)] = v
		c.mu.Unlock()
		return v, nil
	}
}

// volumes keeps, per instance (its bytes) and reference point, the memo of
// slates' volumes its runs share (algos.SlateHVs): the runs of a pass on
// one instance visit the same good slates.
type volumes struct {
	mu sync.Mutex
	m  map[string]*algos.SlateHVs
}

// of returns the memo for the instance of the given bytes, decoded as
// inst, and reference point ref (every coordinate ref[0], as the protocol
// has it).
func (c *volumes) of(instance []byte, inst *envs.Instance, ref []float64) *algos.SlateHVs {
	key := string(binary.LittleEndian.AppendUint64(nil, math.Float64bits(ref[0]))) + string(instance)
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.m[key]; ok {
		return v
	}
	if c.m == nil || len(c.m) >= memoSize {
		c.m = make(map[string]*algos.SlateHVs)
	}
	v := algos.NewSlateHVs(inst.Means, ref)
	c.m[key] = v
	return v
}
