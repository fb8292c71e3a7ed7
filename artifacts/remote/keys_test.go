package remote

import (
	"crypto/ed25519"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKeyFiles: generate writes NAME.key 0600 and NAME.pub, never over an
// existing file; a key readable by others, a public key given as the
// signing key, a private key given as trusted, and garbage are refused
// with errors that say what to do.
func TestKeyFiles(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "ci")
	kf, pf, err := GenerateKey(base)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(kf); fi.Mode().Perm() != 0o600 {
		t.Fatalf("%s has mode %v", kf, fi.Mode())
	}
	k, err := LoadPrivateKey(kf)
	if err != nil {
		t.Fatal(err)
	}
	pubs, err := LoadTrustedKeys(pf + ", ")
	if err != nil || len(pubs) != 1 || !pubs[0].Key.Equal(k.Key.Public().(ed25519.PublicKey)) || pubs[0].Name != "ci" {
		t.Fatalf("trusted %v, %v", pubs, err)
	}
	if _, _, err := GenerateKey(base); err == nil || !strings.Contains(err.Error(), "not overwritten") {
		t.Fatalf("overwrite: %v", err)
	}
	for _, c := range []struct {
		name string
		err  func() error
		want string
	}{
		{"readable key", func() error {
			os.Chmod(kf, 0o644)
			defer os.Chmod(kf, 0o600)
			_, err := LoadPrivateKey(kf)
			return err
		}, "chmod 600"},
		{"public as private", func() error {
			os.Chmod(pf, 0o600)
			defer os.Chmod(pf, 0o644)
			_, err := LoadPrivateKey(pf)
			return err
		}, "is a public key"},
		{"private as trusted", func() error { _, err := LoadTrustedKeys(kf); return err }, "is a private key"},
		{"missing trusted", func() error { _, err := LoadTrustedKeys(filepath.Join(dir, "nope.pub")); return err }, "thv key generate"},
		{"garbage", func() error {
			g := filepath.Join(dir, "g.pub")
			os.WriteFile(g, []byte("hello"), 0o644)
			_, err := LoadTrustedKeys(g)
			return err
		}, "not a thv key file"},
		{"bad name", func() error { _, _, err := GenerateKey(filepath.Join(dir, "a:b")); return err }, "key name"},
	} {
		if err := c.err(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// TestOpenBackendURLs: only s3://bucket[/prefix] and file:///abs are
// accepted; the error says the form wanted.
func TestOpenBackendURLs(t *testing.T) {
	for _, u := range []string{"", "bucket/x", "http://x/y", "s3://", "s3://b/p?x=1", "file://host/x", "file:rel", "file:///does/not/exist"} {
		if _, err := OpenBackend(t.Context(), u); err == nil {
			t.Errorf("%q accepted", u)
		} else if !strings.Contains(err.Error(), "remote") {
			t.Errorf("%q: %v does not name the remote", u, err)
		}
	}
}
