package remote

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Key files are one line, "NAME:BASE64\n", as Nix writes its binary-cache
// keys: NAME.pub holds the 32-byte ed25519 public key, NAME.key (mode
// 0600) the 64-byte private key. The name is a label for messages; trust
// is by the key's bytes.

// PrivateKey is a signing key and its name.
type PrivateKey struct {
	Name string
	Key  ed25519.PrivateKey
}

// PublicKey is a trusted key and its name.
type PublicKey struct {
	Name string
	Key  ed25519.PublicKey
}

// GenerateKey writes a new pair NAME.key (0600) and NAME.pub, where path
// is NAME (a path without the extension). It never overwrites a file.
func GenerateKey(path string) (keyFile, pubFile string, err error) {
	name := filepath.Base(path)
	if err := checkKeyName(name); err != nil {
		return "", "", err
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", "", err
	}
	keyFile, pubFile = path+".key", path+".pub"
	for _, f := range []string{keyFile, pubFile} {
		if _, err := os.Lstat(f); err == nil {
			return "", "", fmt.Errorf("%s exists: not overwritten (remove it, or choose another name)", f)
		}
	}
	if err := writeNew(keyFile, name+":"+base64.StdEncoding.EncodeToString(priv)+"\n", 0o600); err != nil {
		return "", "", err
	}
	if err := writeNew(pubFile, name+":"+base64.StdEncoding.EncodeToString(pub)+"\n", 0o644); err != nil {
		os.Remove(keyFile)
		return "", "", err
	}
	return keyFile, pubFile, nil
}

func writeNew(path, text string, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	return f.Close()
}

func checkKeyName(name string) error {
	if name == "" || name == "." || strings.ContainsAny(name, ": \t\n") {
		return fmt.Errorf("key name %q: want a plain name without ':' or spaces, e.g. ci-2026", name)
	}
	return nil
}

// maxKeyFile bounds a key file: one line of a name and at most 88 base64
// characters.
const maxKeyFile = 4 << 10

// readKeyFile reads a key file, which must be a regular file of at most
// maxKeyFile bytes: a named pipe is refused before it could block the
// open or the read (and with it the signal that should stop thv), a
// device such as /dev/zero before it could fill memory. (The rule of
// pipeline/userfile, which this package, embedded in thv.Sources, does
// not import.) It is checked before it is opened, opened without
// blocking, and checked again once open.
func readKeyFile(file string) ([]byte, error) {
	check := func(fi fs.FileInfo) error {
		switch {
		case !fi.Mode().IsRegular():
			return fmt.Errorf("%s: not a regular file (%s); give the key file", file, kindOf(fi.Mode()))
		case fi.Size() > maxKeyFile:
			return fmt.Errorf("%s: %d bytes, larger than the limit of %d for a key file", file, fi.Size(), maxKeyFile)
		}
		return nil
	}
	fi, err := os.Stat(file)
	if err != nil {
		return nil, err
	}
	if err := check(fi); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(file, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := check(fi); err != nil {
		return nil, err
	}
	return readBounded(f, file, fi.Size(), maxKeyFile)
}

// parseKeyLine reads "NAME:BASE64" of n decoded bytes.
func parseKeyLine(file string, data []byte, n int) (string, []byte, error) {
	line := strings.TrimSpace(string(data))
	name, b64, ok := strings.Cut(line, ":")
	if !ok || strings.ContainsAny(line, "\n") {
		return "", nil, fmt.Errorf("%s: not a thv key file (want one line NAME:BASE64, as thv key generate writes)", file)
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(raw) != n {
		return "", nil, fmt.Errorf("%s: not a thv key file: want %d base64 bytes after %q", file, n, name+":")
	}
	return name, raw, nil
}

// LoadPrivateKey reads a NAME.key file. A key readable by others is refused:
// anyone who can read it can sign entries everyone trusts.
func LoadPrivateKey(file string) (*PrivateKey, error) {
	data, err := readKeyFile(file)
	if err != nil {
		return nil, fmt.Errorf("signing key: %w", err)
	}
	fi, err := os.Stat(file)
	if err != nil {
		return nil, fmt.Errorf("signing key: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("signing key %s: mode %v lets others read it: chmod 600 %s", file, fi.Mode().Perm(), file)
	}
	name, raw, err := parseKeyLine(file, data, ed25519.PrivateKeySize)
	if err != nil {
		if _, _, perr := parseKeyLine(file, data, ed25519.PublicKeySize); perr == nil {
			return nil, fmt.Errorf("%s is a public key: sign with the .key file of the pair", file)
		}
		return nil, err
	}
	priv := ed25519.PrivateKey(raw)
	// The last 32 bytes are the public key: check they belong to the seed.
	if !bytes.Equal(ed25519.NewKeyFromSeed(priv.Seed()), priv) {
		return nil, fmt.Errorf("%s: the private key is damaged (its public half does not match its seed)", file)
	}
	return &PrivateKey{Name: name, Key: priv}, nil
}

// Public returns the public half.
func (k *PrivateKey) Public() PublicKey {
	return PublicKey{Name: k.Name, Key: k.Key.Public().(ed25519.PublicKey)}
}

// LoadTrustedKeys reads NAME.pub files, given as a comma-separated list.
func LoadTrustedKeys(list string) ([]PublicKey, error) {
	var keys []PublicKey
	for f := range strings.SplitSeq(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		data, err := readKeyFile(f)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("trusted key %s: no such file (thv key generate NAME writes NAME.pub)", f)
			}
			return nil, fmt.Errorf("trusted key: %w", err)
		}
		name, raw, err := parseKeyLine(f, data, ed25519.PublicKeySize)
		if err != nil {
			if _, _, perr := parseKeyLine(f, data, ed25519.PrivateKeySize); perr == nil {
				return nil, fmt.Errorf("%s is a private key: trust the .pub file of the pair (and keep the .key secret)", f)
			}
			return nil, err
		}
		keys = append(keys, PublicKey{Name: name, Key: ed25519.PublicKey(raw)})
	}
	return keys, nil
}
