package artifacts

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

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
