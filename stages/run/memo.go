package run

import "sync"

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
