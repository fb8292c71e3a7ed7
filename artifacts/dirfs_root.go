package artifacts

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// rootDir is the portable dirFS: an *os.Root on the store directory, which
// keeps every operation inside it (os.Root refuses a link that points out
// of the directory, at any component, and resolves each component with
// openat and O_NOFOLLOW, so a swap between a check and a use cannot lead
// out either), plus an Lstat of every component before each operation, so
// that a link is refused rather than followed. A link swapped in after
// that check and pointing inside the store would be followed: confinement
// holds; the stricter "no link at all" is then best effort. Linux with
// openat2 uses beneathDir instead, which has no such window.
type rootDir struct {
	r    *os.Root
	name string
}

func openRootDir(abs string) (dirFS, error) {
	r, err := os.OpenRoot(abs)
	if err != nil {
		return nil, err
	}
	return &rootDir{r: r, name: abs}, nil
}

func (d *rootDir) abs(rel string) string { return joinRel(d.name, rel) }

// noLinks checks that no component of rel (the last one too, if last) is
// a symbolic link. A component it cannot look at (missing, say) is left
// to the operation to report.
func (d *rootDir) noLinks(op, rel string, last bool) error {
	if rel == "." || rel == "" {
		return nil
	}
	for i := 0; ; {
		j := strings.IndexByte(rel[i:], filepath.Separator)
		prefix := rel
		if j >= 0 {
			prefix = rel[:i+j]
		}
		if j < 0 && !last {
			return nil
		}
		fi, err := d.r.Lstat(prefix)
		if err != nil {
			return nil // the operation itself will report it
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return &fs.PathError{Op: op, Path: d.abs(prefix), Err: errSymlink}
		}
		if j < 0 {
			return nil
		}
		i += j + 1
	}
}

func (d *rootDir) open(rel string, flag int, perm fs.FileMode) (*os.File, error) {
	// O_CREATE|O_EXCL never follows a link in the last component.
	last := flag&(os.O_CREATE|os.O_EXCL) != os.O_CREATE|os.O_EXCL
	if err := d.noLinks("open", rel, last); err != nil {
		return nil, err
	}
	return d.r.OpenFile(rel, flag, perm)
}

func (d *rootDir) openDir(rel string) (*os.File, error) {
	if err := d.noLinks("open", rel, true); err != nil {
		return nil, err
	}
	return d.r.OpenFile(rel, os.O_RDONLY|oNonblock, 0)
}

func (d *rootDir) lstat(rel string) (fs.FileInfo, error) {
	if err := d.noLinks("lstat", rel, false); err != nil {
		return nil, err
	}
	return d.r.Lstat(rel)
}

func (d *rootDir) isRegular(rel string) bool {
	fi, err := d.lstat(rel)
	return err == nil && fi.Mode().IsRegular()
}

func (d *rootDir) mkdir(rel string, perm fs.FileMode) error {
	if err := d.noLinks("mkdir", rel, false); err != nil {
		return err
	}
	return d.r.Mkdir(rel, perm)
}

func (d *rootDir) rename(oldrel, newrel string) error {
	if err := d.noLinks("rename", oldrel, false); err != nil {
		return err
	}
	if err := d.noLinks("rename", newrel, false); err != nil {
		return err
	}
	return d.r.Rename(oldrel, newrel)
}

func (d *rootDir) remove(rel string) error {
	if err := d.noLinks("remove", rel, false); err != nil {
		return err
	}
	return d.r.Remove(rel)
}

func (d *rootDir) syncfs() error { return syncfsOf(d, ".") }
