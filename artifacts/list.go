package artifacts

import (
	"errors"
	"io/fs"
	"slices"
	"strings"
	"sync"
)

// Objects lists the digests of the objects present in the store, from the
// packs' indexes and the directory listings only (no hashing, one read per
// fan-out directory): a cheap presence index for checking thousands of
// outputs at once. Objects are verified when read, as always.
func (s *Store) Objects() (map[Digest]bool, error) {
	names, err := s.listFanout(objectsDir, "")
	if err != nil {
		return nil, err
	}
	packed := s.packedIDs(recObject)
	out := make(map[Digest]bool, len(names)+len(packed))
	for _, h := range names {
		out[Digest(h)] = true
	}
	for _, h := range packed {
		out[Digest(h)] = true
	}
	return out, nil
}

// packedIDs lists the ids of the live records of type typ of every pack
// (an id once per record), the view refreshed first.
func (s *Store) packedIDs(typ byte) [][32]byte {
	if !s.readsPacks() {
		return nil
	}
	s.refreshPacks()
	s.wholeIndexes()
	var out [][32]byte
	s.pv.each(typ, func(l packLoc) { out = append(out, l.rec.id) })
	return out
}

// ObjectSet is Objects as a DigestSet, read without an allocation per
// object (getdents(2) on Linux): the listing that thv readings shares
// between the no-op checks of its protocols. A file in another object's
// fan-out directory is not listed (it is not at its object's path, where
// Has looks).
func (s *Store) ObjectSet() (*DigestSet, error) {
	set := &DigestSet{}
	top, err := readDirRel(s.dir, objectsDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	const workers = 4
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			buf := make([]byte, max(hasAllBuf, 1))
			var ds []Digest
			for i := w; i < len(top) && errs[w] == nil; i += workers {
				var fan [1]byte
				if !top[i].IsDir() || !decodeLowerHex(fan[:], top[i].Name()) {
					continue
				}
				f, err := s.dir.openDir(objectsDir + sep + top[i].Name())
				if err != nil {
					errs[w] = err
					break
				}
				ds, errs[w] = listObjectDir(f, buf, ds[:0])
				f.Close()
				mine := make([]Digest, 0, len(ds))
				for _, d := range ds {
					if d[0] == fan[0] {
						mine = append(mine, d)
					}
				}
				set.setDir(fan[0], mine) // this worker's directory alone
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if packed := s.packedIDs(recObject); len(packed) > 0 {
		var byDir [256][]Digest
		for _, h := range packed {
			byDir[h[0]] = append(byDir[h[0]], Digest(h))
		}
		for i := range byDir {
			if len(byDir[i]) > 0 {
				set.setDir(byte(i), append(slices.Clone(set.dirs[i].ds), byDir[i]...))
			}
		}
	}
	set.count()
	return set, nil
}

// Keys lists the keys of the index entries present in the store, from
// the packs' indexes and the directory listings only, each once, in no
// particular order.
func (s *Store) Keys() ([]Key, error) {
	names, err := s.listFanout(indexDir, ".json")
	if err != nil {
		return nil, err
	}
	seen := make(map[[32]byte]bool, len(names))
	out := make([]Key, 0, len(names))
	for _, h := range append(names, s.packedIDs(recEntry)...) {
		if !seen[h] {
			seen[h] = true
			out = append(out, Key(h))
		}
	}
	return out, nil
}

// listFanout lists the regular files <dir>/<2 hex>/<64 hex><suffix> (each
// in the directory of its first two digits). The
// fan-out directories are listed in parallel (unsorted reads): on the no-op
// path of a large pipeline this listing is a good part of the wall time.
func (s *Store) listFanout(dir, suffix string) ([][32]byte, error) {
	top, err := readDirRel(s.dir, dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	const workers = 4
	found := make([][][32]byte, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(top); i += workers {
				if !top[i].IsDir() {
					continue
				}
				f, err := s.dir.openDir(dir + sep + top[i].Name())
				if err != nil {
					errs[w] = err
					return
				}
				names, err := f.ReadDir(-1)
				f.Close()
				if err != nil {
					errs[w] = err
					return
				}
				for _, e := range names {
					base, ok := strings.CutSuffix(e.Name(), suffix)
					if !ok || !e.Type().IsRegular() {
						continue
					}
					// A name in another fan-out directory is not at
					// its path (where Has and Get look).
					if h, ok := parseHexName(base); ok && base[:2] == top[i].Name() {
						found[w] = append(found[w], h)
					}
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var out [][32]byte
	for _, f := range found {
		out = append(out, f...)
	}
	return out, nil
}
