package artifacts

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// GCStats counts what GC found and removed.
type GCStats struct {
	ObjectsKept    int
	ObjectsRemoved int
	EntriesKept    int
	EntriesRemoved int
	TmpRemoved     int   // abandoned temp files (writers that died)
	BytesFreed     int64 // sizes of everything removed
	Corrupt        int   // files in corrupt/, left for a human to inspect
}

// GC removes every object whose digest is not in keep, every index entry
// whose key is not in keepKeys, and every temp file whose writer has died.
// A nil map keeps nothing. Files under objects/ and index/ whose names are
// not store names are left alone, and corrupt/ is never touched.
//
// Each removal is of one unreferenced file, so any prefix of the work is a
// consistent store: GC goes on past a failed removal and returns the joined
// errors with stats of what was really removed. All entries are swept
// before any object, so a GC interrupted at any point leaves no entry whose
// objects it removed, only unreferenced objects for the next GC (provided
// keep covers the outputs of keepKeys, which is the caller's job).
//
// Run GC when no pipeline is writing to the store (see the package doc).
func (s *Store) GC(keep map[Digest]bool, keepKeys map[Key]bool) (GCStats, error) {
	var st GCStats
	var errs []error

	// Temp files first: they are the garbage of crashed writers.
	tdir := filepath.Join(s.root, tmpDir)
	tents, err := os.ReadDir(tdir)
	if err != nil {
		errs = append(errs, err)
	}
	for _, de := range tents {
		p := filepath.Join(tdir, de.Name())
		fi, err := de.Info()
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		removed, err := removeIfAbandoned(p, fi.ModTime())
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		if removed {
			st.TmpRemoved++
			st.BytesFreed += fi.Size()
		}
	}

	s.sweep(indexDir, ".json", func(h [32]byte) bool { return keepKeys[Key(h)] },
		&st.EntriesKept, &st.EntriesRemoved, &st.BytesFreed, &errs)
	s.sweep(objectsDir, "", func(h [32]byte) bool { return keep[Digest(h)] },
		&st.ObjectsKept, &st.ObjectsRemoved, &st.BytesFreed, &errs)

	if cents, err := os.ReadDir(filepath.Join(s.root, corruptDir)); err == nil {
		st.Corrupt = len(cents)
	}
	if len(errs) > 0 {
		return st, fmt.Errorf("artifacts: gc %s: %w", s.root, errors.Join(errs...))
	}
	return st, nil
}

// sweep walks <dir>/<2 hex>/<64 hex><suffix> and removes the files for which
// kept is false. The fan-out directories themselves stay: removing them
// would race with a writer that has just created one.
func (s *Store) sweep(dir, suffix string, kept func([32]byte) bool, nKept, nRemoved *int, freed *int64, errs *[]error) {
	root := filepath.Join(s.root, dir)
	fans, err := os.ReadDir(root)
	if err != nil {
		*errs = append(*errs, err)
		return
	}
	for _, fan := range fans {
		if !fan.IsDir() || len(fan.Name()) != 2 || !isLowerHex(fan.Name()) {
			continue
		}
		fdir := filepath.Join(root, fan.Name())
		ents, err := os.ReadDir(fdir)
		if err != nil {
			*errs = append(*errs, err)
			continue
		}
		for _, de := range ents {
			base, ok := strings.CutSuffix(de.Name(), suffix)
			if !ok {
				continue
			}
			h, ok := parseHexName(base)
			if !ok || base[:2] != fan.Name() {
				continue
			}
			if kept(h) {
				*nKept++
				continue
			}
			fi, err := de.Info()
			if err != nil {
				if !errors.Is(err, fs.ErrNotExist) {
					*errs = append(*errs, err)
				}
				continue
			}
			if err := os.Remove(filepath.Join(fdir, de.Name())); err != nil {
				if !errors.Is(err, fs.ErrNotExist) {
					*errs = append(*errs, err)
				}
				continue
			}
			*nRemoved++
			*freed += fi.Size()
		}
	}
}
