package artifacts

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

// GC removes every object whose digest is not in keep, every index entry
// whose key is not in keepKeys, and every temp file whose writer has died.
// A nil map keeps nothing.
//
// Packed records are removed by rewriting their packs (packgc.go): the
// kept records of a pack that holds anything else are copied into a new
// pack, made durable, and the old pack removed; the small objects and the
// entries that are loose files (a store of the loose layout) are packed
// the same way. GC removes only files the store creates, recognised by
// their names and types: regular files named <64 hex> in objects/<2 hex>/,
// <64 hex>.json in index/<2 hex>/, <16 hex>.pack and <16 hex>.idx in packs/,
// and the store's temp-file names in tmp/. Anything else there is left
// alone and counted (Foreign), symbolic links are never followed nor
// removed (Symlinks: a tmp/ that is a link is not entered), and corrupt/
// is never touched. A pack that a writer holds is left as it is.
//
// GC holds the store lock exclusively (LockExclusive) while it works: if a
// pipeline pass holds it, GC removes nothing and fails at once with an
// error wrapping ErrLocked. A caller that computes keep from the store
// should take LockExclusive itself first, so that no pass starts in
// between; GC then reuses that hold.
//
// Each removal is of one file whose kept contents are elsewhere and
// durable, so any prefix of the work is a consistent store: GC goes on
// past a failed removal and returns the joined errors with stats of what
// was really removed. All entries are swept before any object, so a GC
// interrupted at any point leaves no entry whose objects it removed, only
// unreferenced objects for the next GC (provided keep covers the outputs
// of keepKeys, which is the caller's job).
func (s *Store) GC(keep map[Digest]bool, keepKeys map[Key]bool) (GCStats, error) {
	if s.untrusted {
		return GCStats{}, fmt.Errorf("artifacts: gc: %w", s.errUntrusted())
	}
	unlock, err := s.LockExclusive()
	if err != nil {
		return GCStats{}, fmt.Errorf("artifacts: gc: %w", err)
	}
	defer unlock()
	return s.gc(keep, keepKeys, true)
}

// GCDryRun counts what GC(keep, keepKeys) would remove and leave, with the
// same rules, and changes nothing. It takes no lock and works on a
// read-only store (Open in mode Existing).
func (s *Store) GCDryRun(keep map[Digest]bool, keepKeys map[Key]bool) (GCStats, error) {
	return s.gc(keep, keepKeys, false)
}

func (s *Store) gc(keep map[Digest]bool, keepKeys map[Key]bool, remove bool) (GCStats, error) {
	var st GCStats
	var errs []error

	// Temp files first: they are the garbage of crashed writers.
	s.sweepTemp(&st, &errs, remove)
	if remove {
		s.retireOwnPack()
	}
	pl := s.planGC(keep, keepKeys, remove)
	if remove {
		s.repack(pl, &st, &errs)
	} else {
		pl.release()
		st.BytesFreed += pl.freed
		st.PacksRemoved = len(pl.rewrite)
	}
	for id := range pl.objects {
		if keep[Digest(id)] {
			st.ObjectsKept++
		} else {
			st.ObjectsRemoved++
		}
	}
	for id := range pl.entries {
		if keepKeys[Key(id)] {
			st.EntriesKept++
		} else {
			st.EntriesRemoved++
		}
	}
	// The loose files: those not kept, and those packed (migrated) by a
	// GC that removes.
	var ignore int
	s.sweep(indexDir, ".json", func(h [32]byte) bool { return keepKeys[Key(h)] && !pl.migrated[h] },
		&ignore, &ignore, &st, &errs, remove)
	s.sweep(objectsDir, "", func(h [32]byte) bool { return keep[Digest(h)] && !pl.migrated[h] },
		&ignore, &ignore, &st, &errs, remove)
	s.checkPacksDir(&st)

	if cents, err := readDirRel(s.dir, corruptDir); err == nil {
		st.Corrupt = len(cents)
	}
	if len(errs) > 0 {
		op := "gc"
		if !remove {
			op = "gc (dry run)"
		}
		return st, fmt.Errorf("artifacts: %s %s: %w", op, s.root, s.writeErr(errors.Join(errs...)))
	}
	return st, nil
}

// checkPacksDir counts what packs/ holds that the store did not create:
// links and files of other names are left alone.
func (s *Store) checkPacksDir(st *GCStats) {
	var errs []error
	for _, de := range s.storeDir(packsDir, st, &errs) {
		p := s.dir.abs(packsDir + sep + de.Name())
		switch {
		case de.Type()&fs.ModeSymlink != 0:
			st.leftAlone(p, true)
		case !de.Type().IsRegular() || !isPackFileName(de.Name()):
			st.leftAlone(p, false)
		}
	}
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

// sweep walks <dir>/<2 hex>/<64 hex><suffix> and removes the regular files
// for which kept is false. The fan-out directories themselves stay: removing
// them would race with a writer that has just created one.
func (s *Store) sweep(dir, suffix string, kept func([32]byte) bool, nKept, nRemoved *int, st *GCStats, errs *[]error, remove bool) {
	for _, fan := range s.storeDir(dir, st, errs) {
		fanRel := dir + sep + fan.Name()
		fdir := s.dir.abs(fanRel)
		switch {
		case fan.Type()&fs.ModeSymlink != 0:
			st.leftAlone(fdir, true)
			continue
		case !fan.IsDir() || len(fan.Name()) != 2 || !isLowerHex(fan.Name()):
			st.leftAlone(fdir, false)
			continue
		}
		ents, err := readDirRel(s.dir, fanRel)
		if err != nil {
			appendErr(errs, err)
			continue
		}
		for _, de := range ents {
			rel := fanRel + sep + de.Name()
			p := s.dir.abs(rel)
			if de.Type()&fs.ModeSymlink != 0 {
				st.leftAlone(p, true)
				continue
			}
			base, ok := strings.CutSuffix(de.Name(), suffix)
			var h [32]byte
			if ok {
				h, ok = parseHexName(base)
			}
			if !ok || base[:2] != fan.Name() || !de.Type().IsRegular() {
				st.leftAlone(p, false)
				continue
			}
			if kept(h) {
				*nKept++
				continue
			}
			fi, err := de.Info()
			if err != nil {
				appendErr(errs, err)
				continue
			}
			if remove {
				if err := s.dir.remove(rel); err != nil {
					appendErr(errs, err)
					continue
				}
			}
			*nRemoved++
			st.BytesFreed += fi.Size()
		}
	}
}
