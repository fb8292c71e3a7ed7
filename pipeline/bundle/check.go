package bundle

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Protocol returns the names of the protocol file (.yaml or .yml) and the
// lock (.lock) at the top of the bundle whose manifest is m: a bundle
// holds one of each there, and the error says how many it holds otherwise.
func (m Manifest) Protocol() (params, lock string, err error) {
	var yamls, locks []string
	for p := range m {
		switch {
		case strings.Contains(p, "/"):
		case strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml"):
			yamls = append(yamls, p)
		case strings.HasSuffix(p, ".lock"):
			locks = append(locks, p)
		}
	}
	if len(yamls) != 1 || len(locks) != 1 {
		return "", "", fmt.Errorf("a bundle holds one protocol file (.yaml) and one lock (.lock) at its top, this one %d and %d", len(yamls), len(locks))
	}
	return yamls[0], locks[0], nil
}

// MaxLockBytes bounds the lock a bundle may hold, so that reading it
// takes a bounded share of a verifier's memory (about 1.6 times the
// lock's size): the paper's lock, of 7,466 tasks, is 5.8 MB, and a
// protocol plans at most 250,000 tasks.
const MaxLockBytes = 256 << 20

// CheckLockSize refuses a lock larger than MaxLockBytes before it is read.
func CheckLockSize(dir, lockName string) error {
	fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(lockName)))
	if err != nil {
		return err
	}
	if fi.Size() > MaxLockBytes {
		return fmt.Errorf("%s is %d bytes, more than the %d a bundle's lock may have: not read", lockName, fi.Size(), MaxLockBytes)
	}
	return nil
}

// CheckResults checks that the results/ of the bundle extracted in dir are
// the files of fresh, a directory of results exported afresh from the
// bundle's store: the same paths, and each pair of files accepted by same,
// which is given the path (slash-separated, relative to results/), the
// fresh bytes and the bundle's, and returns an error if they differ or a
// note on how they agree (such as an image drawn on another CPU), or "".
// CheckResults returns the notes in the order of the paths.
func CheckResults(dir, fresh string, same func(path string, fresh, bundled []byte) (note string, err error)) (notes []string, err error) {
	want, err := listFiles(fresh)
	if err != nil {
		return nil, err
	}
	results := filepath.Join(dir, ResultsDir)
	got, err := listFiles(results)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, p := range want {
		a, err := os.ReadFile(filepath.Join(fresh, p))
		if err != nil {
			return nil, err
		}
		b, err := os.ReadFile(filepath.Join(results, p))
		if err != nil {
			return nil, fmt.Errorf("%s is missing: the store's outputs give it", path.Join(ResultsDir, p))
		}
		note, err := same(p, a, b)
		if err != nil {
			return nil, err
		}
		if note != "" {
			notes = append(notes, note)
		}
	}
	for _, p := range got {
		if !slices.Contains(want, p) {
			return nil, fmt.Errorf("%s is no output of the bundle's tasks", path.Join(ResultsDir, p))
		}
	}
	return notes, nil
}

// listFiles lists the files below root, slash-separated and relative to
// it, in lexical order.
func listFiles(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	return out, err
}
