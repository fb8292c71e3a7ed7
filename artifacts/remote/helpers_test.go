package remote

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"thv/artifacts"
	"thv/internal/s3test"
)

func newStore(t *testing.T) *artifacts.Store {
	t.Helper()
	st, err := artifacts.Open(t.TempDir(), artifacts.Create)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// putTask stores task i's two outputs and entry in st; size is each
// output's length.
func putTask(t *testing.T, st *artifacts.Store, i, size int) artifacts.Entry {
	t.Helper()
	e := artifacts.Entry{Key: sha256.Sum256(fmt.Appendf(nil, "task %d", i)), Kind: "run"}
	for _, name := range []string{"metrics.parquet", "trace.parquet"} {
		data := bytes.Repeat(fmt.Appendf(nil, "%s of task %d;", name, i), size/20+1)[:size]
		d, err := st.Put(data)
		if err != nil {
			t.Fatal(err)
		}
		e.Outputs = append(e.Outputs, artifacts.Output{Name: name, Digest: d, Size: int64(size)})
	}
	if err := st.PutEntry(e); err != nil {
		t.Fatal(err)
	}
	return e
}

// setForTest sets *p to v for the test.
func setForTest[T any](t testing.TB, p *T, v T) {
	old := *p
	*p = v
	t.Cleanup(func() { *p = old })
}

func genKey(t *testing.T, name string) *PrivateKey {
	t.Helper()
	base := filepath.Join(t.TempDir(), name)
	kf, _, err := GenerateKey(base)
	if err != nil {
		t.Fatal(err)
	}
	k, err := LoadPrivateKey(kf)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// logBuf is a concurrency-safe log sink.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) { l.mu.Lock(); defer l.mu.Unlock(); return l.b.Write(p) }
func (l *logBuf) String() string              { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// fastPolicy keeps failing tests short.
var fastPolicy = Policy{Attempts: 3, Backoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond, Timeout: 2 * time.Second}

func openRemote(t *testing.T, url string, sign *PrivateKey, trusted ...PublicKey) (*Remote, *logBuf) {
	t.Helper()
	lb := &logBuf{}
	rm, err := Open(context.Background(), Options{URL: url, SignKey: sign, Trusted: trusted, Logger: slog.New(slog.NewTextHandler(lb, nil)), Policy: fastPolicy})
	if err != nil {
		t.Fatal(err)
	}
	return rm, lb
}

// s3Remote starts a gateway with a bucket and returns the URL of a prefix
// in it (the process environment points the AWS SDK at it).
func s3Remote(t *testing.T) (*s3test.Server, string) {
	srv := s3test.Start(t)
	srv.SetEnv(t)
	srv.Bucket(t, "thv-cache")
	return srv, "s3://thv-cache/team/paper"
}

func fileRemote(t *testing.T) (dir, url string) {
	dir = t.TempDir()
	return dir, "file://" + dir
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func slogTo(w *logBuf) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

func mustUnmarshal(t *testing.T, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatal(err)
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
