package artifacts

// The sweeper of atomic.go's temp files: it removes those whose writer has
// died (whose lock it can take), in a store's tmp/ and beside the ordinary
// files WriteFileAtomic writes.

import (
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"
)

// sweep removes (or, with remove false, only counts) the temp files among
// ents, the entries of the directory a.tmp, whose writer has died. isTemp
// says whether a name is one of the temp files to sweep, and how old such
// a file must be before it is removed (0: as soon as no writer holds it).
// Symbolic links and entries that are not temp files are left alone and
// counted in st; errs, if not nil, collects the errors.
func (a atomicDir) sweep(ents []fs.DirEntry, isTemp func(name string) (ok bool, minAge time.Duration), st *GCStats, errs *[]error, remove bool) {
	for _, de := range ents {
		rel := de.Name()
		if a.tmp != "." {
			rel = a.tmp + sep + rel
		}
		p := a.d.abs(rel)
		ok, minAge := isTemp(de.Name())
		switch {
		case de.Type()&fs.ModeSymlink != 0:
			st.leftAlone(p, true)
			continue
		case !de.Type().IsRegular() || !ok:
			st.leftAlone(p, false)
			continue
		}
		fi, err := de.Info()
		if err != nil {
			appendErr(errs, err)
			continue
		}
		removed := false
		if time.Since(fi.ModTime()) >= minAge {
			removed, err = a.removeIfAbandoned(rel, fi, remove)
		}
		switch {
		case err != nil:
			appendErr(errs, err)
		case removed:
			st.TmpRemoved++
			st.BytesFreed += fi.Size()
		default:
			st.TmpLive++
		}
	}
}

// removeIfAbandoned removes the temp file rel (whose Lstat is fi) if no
// writer holds its lock (tempAbandoned); with remove false it only reports
// whether it would. It follows no link, and leaves a file that is not the
// one listed.
func (a atomicDir) removeIfAbandoned(rel string, fi fs.FileInfo, remove bool) (bool, error) {
	f, err := a.d.open(rel, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return false, err
	}
	defer f.Close()
	cur, err := f.Stat()
	if err != nil {
		return false, err
	}
	if !cur.Mode().IsRegular() || !os.SameFile(cur, fi) {
		return false, nil // replaced since listed: not what we looked at
	}
	if ok, err := tempAbandoned(f, fi); !ok || err != nil {
		return false, err
	}
	if !remove {
		return true, nil
	}
	if !flockSupported {
		f.Close() // no lock to hold, and Windows cannot remove an open file
	}
	if err := a.d.remove(rel); err != nil {
		return false, err
	}
	return true, nil
}

// isTempName reports whether name is the name of one of the store's temp
// files: a temp name (tempBase) whose base is <64 hex>, <64 hex>.json,
// VERSION, or a pack's file, <16 hex>.pack or <16 hex>.idx.
func isTempName(name string) bool {
	base, ok := tempBase(name)
	if !ok {
		return false
	}
	if base == versionFile || isPackFileName(base) {
		return true
	}
	base, _ = strings.CutSuffix(base, ".json")
	_, ok = parseHexName(base)
	return ok
}

// sweepTemp removes (or, with remove false, counts) the store's own temp
// files in tmp/ whose writer has died. errs may be nil (Open's best-effort
// cleaning).
func (s *Store) sweepTemp(st *GCStats, errs *[]error, remove bool) {
	s.atomic().sweep(s.storeDir(tmpDir, st, errs), func(name string) (bool, time.Duration) {
		return isTempName(name), 0
	}, st, errs, remove)
}

// legacyTempAge is how old a temp file of an older thv (named by
// os.CreateTemp, .<name>.tmp<digits>, and never locked) must be before
// RemoveAbandonedTemps removes it: no single write takes this long.
const legacyTempAge = time.Minute

// RemoveAbandonedTemps removes from dir the temp files that writers of
// WriteFileAtomic killed before their rename left for the file name (for
// any file if name is ""): only regular files with the writer's temp names,
// and only those whose lock no writer holds, so never one being written.
// Failures are ignored: a temp file left is harmless, and the next sweep
// tries again.
func RemoveAbandonedTemps(dir, name string) {
	if dir == "" {
		dir = "."
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	a := atomicDir{d: plainDir{dir}, tmp: "."}
	var st GCStats
	a.sweep(ents, func(n string) (bool, time.Duration) {
		hidden, ok := strings.CutPrefix(n, ".")
		if !ok {
			return false, 0
		}
		if base, ok := tempBase(hidden); ok {
			return base != "" && (name == "" || base == name), 0
		}
		// Older builds: .<name>.tmp<decimal digits>, unlocked.
		i := strings.LastIndex(hidden, tempSuffix)
		if i <= 0 || name != "" && hidden[:i] != name {
			return false, 0
		}
		_, err := strconv.ParseUint(hidden[i+len(tempSuffix):], 10, 64)
		return err == nil, legacyTempAge
	}, &st, nil, true)
}
