package remote

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// Policy is how a remote operation is retried: Attempts tries in all,
// waiting Backoff, 2·Backoff, 4·Backoff … (capped at MaxBackoff, with
// jitter) in between, each try cut off after Timeout. An absent file is an
// answer, not a failure, and is never retried.
type Policy struct {
	Attempts   int
	Backoff    time.Duration
	MaxBackoff time.Duration
	Timeout    time.Duration
}

// DefaultPolicy rides out a restart of the server or a short network
// outage (5 tries with waits of up to 0.5, 1, 2 and 4 s between them, less
// with jitter) without making a dead server hang a run for long.
var DefaultPolicy = Policy{Attempts: 5, Backoff: 500 * time.Millisecond, MaxBackoff: 8 * time.Second, Timeout: 2 * time.Minute}

// retrying wraps a backend with a Policy. Once an operation has failed
// every attempt, the remote is marked down and later operations fail at
// once with that error: a run against a dead server computes locally
// instead of waiting out every task's retries.
type retrying struct {
	b      Backend
	policy Policy

	mu   sync.Mutex
	down error
}

// RemoteError is an operation that failed every attempt; it names the URL.
type RemoteError struct {
	URL      string
	Op       string // "get objects/ab/…", …
	Attempts int
	Err      error
}

func (e *RemoteError) Error() string {
	if e.Attempts == 1 {
		return fmt.Sprintf("remote %s: %s: %v", e.URL, e.Op, e.Err)
	}
	return fmt.Sprintf("remote %s: %s: failed %d times, the last: %v", e.URL, e.Op, e.Attempts, e.Err)
}

func (e *RemoteError) Unwrap() error { return e.Err }

func (r *retrying) do(ctx context.Context, op string, f func(ctx context.Context) error) error {
	r.mu.Lock()
	down := r.down
	r.mu.Unlock()
	if down != nil {
		return fmt.Errorf("remote %s: %s: %w (%w)", r.b, op, errDown, down)
	}
	wait := r.policy.Backoff
	var err error
	for i := 0; i < r.policy.Attempts; i++ {
		if i > 0 {
			d := wait/2 + rand.N(wait/2+1) // jitter: clones that failed together do not retry together
			select {
			case <-time.After(d):
			case <-ctx.Done():
				return fmt.Errorf("remote %s: %s: %w (after %v)", r.b, op, ctx.Err(), err)
			}
			wait = min(2*wait, r.policy.MaxBackoff)
		}
		actx, cancel := context.WithTimeout(ctx, r.policy.Timeout)
		err = f(actx)
		cancel()
		if err == nil || isNotExist(err) || errors.Is(err, ErrRefused) {
			return err // an answer: another try would get the same
		}
		if ctx.Err() != nil {
			return fmt.Errorf("remote %s: %s: %w", r.b, op, ctx.Err())
		}
		if errors.Is(err, errNoRetry) || errors.Is(err, ErrNoBucket) {
			break
		}
	}
	attempts := r.policy.Attempts
	if errors.Is(err, ErrNoBucket) {
		attempts = 1
	}
	re := &RemoteError{URL: r.b.String(), Op: op, Attempts: attempts, Err: err}
	r.mu.Lock()
	if r.down == nil {
		r.down = re
	}
	r.mu.Unlock()
	return re
}

// ErrRefused marks a file of the remote that is refused as it is (larger
// than its entry states, not a regular file, a link): the operation is
// not retried and the remote is not given up on; the entry that names it
// is not used.
var ErrRefused = errors.New("refused")

// ErrNoBucket marks an S3 remote whose bucket does not exist: not retried
// (it will not appear), and the remote is given up on at once.
var ErrNoBucket = errors.New("the bucket does not exist")

// errNoRetry marks an error that another attempt cannot cure.
var errNoRetry = errors.New("not retried")

// errDown marks an operation not tried because the remote failed before in
// this run: it was reported then, and is not reported again per task.
var errDown = errors.New("not tried: the server failed before")

func (r *retrying) get(ctx context.Context, name string, limit int64) ([]byte, error) {
	var data []byte
	err := r.do(ctx, "get "+name, func(ctx context.Context) (err error) {
		data, err = r.b.Get(ctx, name, limit)
		return err
	})
	return data, err
}

func (r *retrying) put(ctx context.Context, name string, data []byte) error {
	return r.do(ctx, "put "+name, func(ctx context.Context) error { return r.b.Put(ctx, name, data) })
}

func (r *retrying) stat(ctx context.Context, name string) (Info, error) {
	var info Info
	err := r.do(ctx, "stat "+name, func(ctx context.Context) (err error) {
		info, err = r.b.Stat(ctx, name)
		return err
	})
	return info, err
}

func (r *retrying) del(ctx context.Context, name string) error {
	return r.do(ctx, "delete "+name, func(ctx context.Context) error { return r.b.Delete(ctx, name) })
}

// list is not resumed part-way: a failed listing is repeated whole.
func (r *retrying) list(ctx context.Context, prefix string, fn func(Info) error) error {
	return r.do(ctx, "list "+prefix, func(ctx context.Context) error {
		var seen []Info
		if err := r.b.List(ctx, prefix, func(i Info) error { seen = append(seen, i); return nil }); err != nil {
			return err
		}
		for _, i := range seen {
			if err := fn(i); err != nil {
				return fmt.Errorf("%w: %w", errNoRetry, err)
			}
		}
		return nil
	})
}

// failure is the error that marked the remote down, if any.
func (r *retrying) failure() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.down
}
