package remote

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strings"
	"time"
)

// ErrNotExist is wrapped by a backend's error for a name that is absent.
var ErrNotExist = fs.ErrNotExist

// Info describes one stored file.
type Info struct {
	Name    string // relative to the remote's root (prefix)
	Size    int64
	ModTime time.Time
}

// Backend is a flat namespace of immutable files on object storage. Names
// are slash-separated and relative to the root given in the URL; the
// remote builds them itself (layout in doc.go) and never passes one it
// read from the server. Every method may be called concurrently.
type Backend interface {
	// Get returns the file's bytes; an absent file is an error wrapping
	// ErrNotExist. At most limit bytes are read (more is an error).
	Get(ctx context.Context, name string, limit int64) ([]byte, error)
	// Put writes the file so that it becomes visible whole or not at all.
	Put(ctx context.Context, name string, data []byte) error
	// Stat describes the file; absent is an error wrapping ErrNotExist.
	Stat(ctx context.Context, name string) (Info, error)
	// List calls fn for every file whose name starts with prefix.
	List(ctx context.Context, prefix string, fn func(Info) error) error
	// Delete removes the file; an absent file is not an error.
	Delete(ctx context.Context, name string) error
	// String is the URL, for messages.
	String() string
}

// OpenBackend returns the backend for a URL: s3://bucket[/prefix] or
// file:///absolute/dir.
func OpenBackend(ctx context.Context, rawURL string) (Backend, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("remote %q: %v (want s3://bucket/prefix or file:///dir)", rawURL, err)
	}
	switch u.Scheme {
	case "s3":
		if u.Host == "" {
			return nil, fmt.Errorf("remote %q: no bucket (want s3://bucket/prefix)", rawURL)
		}
		if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return nil, fmt.Errorf("remote %q: a query, fragment or user is not supported: configure the endpoint, region and credentials with the AWS environment (AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID, AWS_PROFILE …)", rawURL)
		}
		return newS3(ctx, rawURL, u.Host, strings.Trim(u.Path, "/"))
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return nil, fmt.Errorf("remote %q: file URLs name a local directory: file:///absolute/path", rawURL)
		}
		if u.Path == "" || !strings.HasPrefix(u.Path, "/") {
			return nil, fmt.Errorf("remote %q: need an absolute path: file:///absolute/path", rawURL)
		}
		return newFile(rawURL, u.Path)
	case "":
		return nil, fmt.Errorf("remote %q: no scheme (want s3://bucket/prefix or file:///dir)", rawURL)
	default:
		return nil, fmt.Errorf("remote %q: scheme %q is not supported (want s3:// or file://)", rawURL, u.Scheme)
	}
}

// isNotExist reports whether err means an absent file.
func isNotExist(err error) bool { return errors.Is(err, ErrNotExist) }
