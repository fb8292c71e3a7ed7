package pipeline

import (
	"context"

	"thv/artifacts"
)

// Remote is a second level of the store, shared between machines (package
// thv/artifacts/remote implements it). The scheduler asks it on a local
// miss, before executing a task, and hands it the result after executing
// one. It is a setting of the store: it enters no key and nothing in the
// lock, and its failures never fail a task.
type Remote interface {
	// Fetch looks key up in the remote. On a hit it has checked the entry
	// (a trusted signature) and re-hashed every object, put them and the
	// entry in st, and returns the outputs; a task fetched this way is
	// Cached. On a miss, or an entry it would not use (and says why), the
	// task is executed.
	Fetch(ctx context.Context, st *artifacts.Store, key artifacts.Key, kind, task string) (map[string]artifacts.Digest, bool)
	// Publish uploads what st holds under key after the task executed
	// (objects first, the entry last). Its failures are the Remote's to
	// report: the local store keeps the result regardless.
	Publish(ctx context.Context, st *artifacts.Store, key artifacts.Key, task string)
}
