// Package storetest helps tests of code that must not touch what lies
// outside a store: it describes a directory tree exactly, so that a test can
// show an operation created, moved, changed or removed nothing there, and
// plants the symbolic links a hostile writer would. (Package
// artifacts/damage damages the objects themselves.)
package storetest

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Tree describes everything below dir: each path with its type, mode, link
// target or content.
func Tree(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		desc := fmt.Sprintf("%s %v", rel, fi.Mode())
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			desc += " -> " + target
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			desc += fmt.Sprintf(" %q", b)
		}
		out = append(out, desc)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Unchanged fails t if the tree below dir differs from before (a Tree).
func Unchanged(t testing.TB, what, dir string, before []string) {
	t.Helper()
	if after := Tree(t, dir); !slices.Equal(before, after) {
		t.Errorf("%s changed %s:\nbefore %q\nafter  %q", what, dir, before, after)
	}
}

// Symlink replaces whatever is at link by a symbolic link to target.
func Symlink(t testing.TB, target, link string) {
	t.Helper()
	if err := os.RemoveAll(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
