package artifacts

// What a sweep of the store's directories (GC, the temp sweeper) counts,
// and how it lists a directory of the store without following a link.

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// GCStats counts what GC found, removed and left alone.
type GCStats struct {
	ObjectsKept    int
	ObjectsRemoved int
	EntriesKept    int
	EntriesRemoved int
	TmpRemoved     int   // abandoned temp files (writers that died)
	TmpLive        int   // temp files being written (their writer holds them), left
	BytesFreed     int64 // sizes of everything removed
	Corrupt        int   // files in corrupt/, left for a human to inspect

	// PacksRemoved counts the packs GC rewrote (their kept records copied
	// into PacksWritten new ones) and removed.
	PacksRemoved int
	PacksWritten int

	// Foreign counts the files and directories under objects/, index/ and
	// tmp/ that the store did not create (names that are not store names,
	// or a directory where a file belongs) and Symlinks the symbolic
	// links found there (tmp/, objects/ or index/ themselves included). GC
	// never removes, enters or follows them. FirstLeft is the path of the
	// first one found, for the report.
	Foreign   int
	Symlinks  int
	FirstLeft string
}

// String is a one-line report, e.g. "removed 2 objects, 1 index entry and 1
// abandoned temp file (0.0 MB); kept 10 objects and 4 index entries; left
// alone 1 file the store did not create (/s/tmp/draft.txt)".
func (st GCStats) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "removed %s, %s and %s (%.1f MB); kept %s and %s",
		plural(st.ObjectsRemoved, "object"), plural(st.EntriesRemoved, "index entry"),
		plural(st.TmpRemoved, "abandoned temp file"), float64(st.BytesFreed)/1e6,
		plural(st.ObjectsKept, "object"), plural(st.EntriesKept, "index entry"))
	switch {
	case st.PacksWritten > 0:
		fmt.Fprintf(&b, "; repacked %s into %d", plural(st.PacksRemoved, "pack"), st.PacksWritten)
	case st.PacksRemoved > 0: // a dry run
		fmt.Fprintf(&b, "; %s to repack", plural(st.PacksRemoved, "pack"))
	}
	if st.TmpLive > 0 {
		fmt.Fprintf(&b, "; %s still being written", plural(st.TmpLive, "temp file"))
	}
	if st.Foreign+st.Symlinks > 0 {
		var parts []string
		if st.Foreign > 0 {
			parts = append(parts, plural(st.Foreign, "file")+" the store did not create")
		}
		if st.Symlinks > 0 {
			parts = append(parts, plural(st.Symlinks, "symbolic link"))
		}
		fmt.Fprintf(&b, "; left alone %s (e.g. %s)", strings.Join(parts, " and "), st.FirstLeft)
	}
	if st.Corrupt > 0 {
		fmt.Fprintf(&b, "; %s in corrupt/ to inspect", plural(st.Corrupt, "file"))
	}
	return b.String()
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	if w, ok := strings.CutSuffix(what, "entry"); ok {
		return fmt.Sprintf("%d %sentries", n, w)
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// leftAlone records a path GC does not touch.
func (st *GCStats) leftAlone(path string, symlink bool) {
	if symlink {
		st.Symlinks++
	} else {
		st.Foreign++
	}
	if st.FirstLeft == "" {
		st.FirstLeft = path
	}
}

// storeDir lists the store's subdirectory dir if it is a real directory; a
// symbolic link or a file in its place is recorded in st and not entered.
// A missing directory lists as empty.
func (s *Store) storeDir(dir string, st *GCStats, errs *[]error) []fs.DirEntry {
	p := s.dir.abs(dir)
	fi, err := s.dir.lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		appendErr(errs, err)
		return nil
	case fi.Mode()&fs.ModeSymlink != 0:
		st.leftAlone(p, true)
		return nil
	case !fi.IsDir():
		st.leftAlone(p, false)
		return nil
	}
	ents, err := readDirRel(s.dir, dir)
	if err != nil {
		appendErr(errs, err)
	}
	return ents
}

// appendErr collects err unless errs is nil or err says the file vanished
// (another GC, or a writer renaming its temp file into place).
func appendErr(errs *[]error, err error) {
	if errs != nil && !errors.Is(err, fs.ErrNotExist) {
		*errs = append(*errs, err)
	}
}
