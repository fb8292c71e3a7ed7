package artifacts

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"slices"
	"strings"
	"sync"
)

// A simulated power cut, for the tests of durability from verification
// (durable.go; the tests are in powercut_test.go, package artifacts_test,
// which runs a pipeline on a store under this layer).

// FaultFS is a test file system layer under a store: it passes every
// operation through, records which of the store's files (loose objects and
// index entries) were put in place and which records were appended to
// packs since the last barrier (syncfs), counts the barriers, and can turn
// one barrier into a power cut.
//
// A record appended to a pack is named by a pseudo-rel,
// packs/<16 hex>.pack@<offset>:<type>:<64 hex id>, type o (an object), e
// (an index entry) or k (a kill).
type FaultFS struct {
	dirFS
	s  *Store
	mu sync.Mutex
	// unsynced lists the rels renamed into objects/ or index/, and the
	// records appended to packs, since the last barrier, in order.
	unsynced []string
	// idxs lists the pack indexes written since the last barrier: caches
	// that a power cut damages only when it damages everything.
	idxs     []string
	barriers int
	cutAt    int // the barrier that is a power cut (0: none)
	// before records, for each rel put in place, how many files were
	// unsynced then (itself excluded) and how many barriers had passed.
	before map[string][2]int
	// OnBarrier, if set, is called at each barrier (with the number of
	// files it makes durable) before it syncs.
	OnBarrier func(unsynced int)
}

// ErrPowerCut is what the barrier that is a power cut returns.
var ErrPowerCut = errors.New("simulated power cut")

// InjectFaults puts a FaultFS under s (before s is used by other
// goroutines).
func InjectFaults(s *Store) *FaultFS {
	f := &FaultFS{dirFS: s.dir, s: s, before: map[string][2]int{}}
	s.dir = f
	return f
}

func (f *FaultFS) rename(oldrel, newrel string) error {
	err := f.dirFS.rename(oldrel, newrel)
	if err == nil && strings.HasPrefix(newrel, packsDir+sep) && strings.HasSuffix(newrel, idxExt) {
		f.mu.Lock()
		f.idxs = append(f.idxs, newrel)
		f.mu.Unlock()
	}
	if err == nil && (strings.HasPrefix(newrel, objectsDir+sep) || strings.HasPrefix(newrel, indexDir+sep)) {
		f.mu.Lock()
		f.unsynced = slices.DeleteFunc(f.unsynced, func(r string) bool { return r == newrel })
		f.before[newrel] = [2]int{len(f.unsynced), f.barriers}
		f.unsynced = append(f.unsynced, newrel)
		f.mu.Unlock()
	}
	return err
}

// packAppended records a record appended to a pack.
func (f *FaultFS) packAppended(rel string, r packRec) {
	f.mu.Lock()
	defer f.mu.Unlock()
	name := recordRel(rel, r)
	f.before[name] = [2]int{len(f.unsynced), f.barriers}
	f.unsynced = append(f.unsynced, name)
}

// recordRel is the pseudo-rel of record r of the pack at rel.
func recordRel(rel string, r packRec) string {
	return fmt.Sprintf("%s@%d:%c:%x", rel, r.off, r.typ, r.id)
}

// parseRecordRel reads a pseudo-rel: the pack's rel, the record's offset,
// type and id.
func parseRecordRel(rel string) (pack string, off int64, typ byte, id [32]byte, ok bool) {
	pack, rest, found := strings.Cut(rel, "@")
	if !found {
		return "", 0, 0, id, false
	}
	var hexID string
	if _, err := fmt.Sscanf(rest, "%d:%c:%s", &off, &typ, &hexID); err != nil || !decodeLowerHex(id[:], []byte(hexID)) {
		return "", 0, 0, id, false
	}
	return pack, off, typ, id, true
}

// IsRecord reports whether rel names a packed record, and of which type:
// "object", "entry" or "kill".
func IsRecord(rel string) (what string, id [32]byte, ok bool) {
	_, _, typ, id, ok := parseRecordRel(rel)
	if !ok {
		return "", id, false
	}
	return map[byte]string{recObject: "object", recEntry: "entry", recKill: "kill"}[typ], id, true
}

// RecordPayload reads the decoded payload of the record rel names.
func RecordPayload(st *Store, rel string) ([]byte, error) {
	pack, off, typ, id, ok := parseRecordRel(rel)
	if !ok {
		return nil, fmt.Errorf("%s: not a record", rel)
	}
	b, err := os.ReadFile(st.dir.abs(pack))
	if err != nil {
		return nil, err
	}
	if off+recHeaderSize > int64(len(b)) {
		return nil, fmt.Errorf("%s: beyond the pack", rel)
	}
	h, err := parseRecHeader(b[off:])
	if err != nil || h.typ != typ || h.id != id || off+recHeaderSize+int64(h.stored) > int64(len(b)) {
		return nil, fmt.Errorf("%s: not that record (%v)", rel, err)
	}
	return decodePayload(h, b[off+recHeaderSize:off+recHeaderSize+int64(h.stored)])
}

// RecordLive reports whether st (its packs looked at afresh) serves the
// record rel names: a live record of that type and id at that offset.
func RecordLive(st *Store, rel string) bool {
	pack, off, typ, id, ok := parseRecordRel(rel)
	if !ok {
		return false
	}
	st.refreshPacks()
	for _, l := range st.pv.find(id, typ) {
		if packRel(l.pf.name) == pack && l.rec.off == off {
			return true
		}
	}
	return false
}

func (f *FaultFS) syncfs() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.barriers++
	if f.OnBarrier != nil {
		f.OnBarrier(len(f.unsynced))
	}
	if f.barriers == f.cutAt {
		return ErrPowerCut // the power fails before anything is synced
	}
	if err := f.dirFS.syncfs(); err != nil {
		return err
	}
	f.unsynced, f.idxs = nil, nil
	return nil
}

// CutAtBarrier makes the n-th barrier from now a power cut: it returns
// ErrPowerCut and syncs nothing.
func (f *FaultFS) CutAtBarrier(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cutAt = f.barriers + n
}

// Barriers returns the number of barriers so far.
func (f *FaultFS) Barriers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.barriers
}

// Unsynced returns the rels put in place since the last barrier.
func (f *FaultFS) Unsynced() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.unsynced)
}

// WrittenAfter returns, for the store file rel, how many other files were
// unsynced when it was put in place and how many barriers had passed, and
// whether it was put in place at all.
func (f *FaultFS) WrittenAfter(rel string) (unsynced, barriers int, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.before[rel]
	return b[0], b[1], ok
}

// Damage is what a power cut does to a file written since the last
// barrier.
type Damage int

const (
	Drop     Damage = iota // the file is gone (its rename was lost)
	Empty                  // in place, no data (metadata written, data not)
	Truncate               // in place, cut partway
	Garble                 // in place, its bytes garbage
)

func (d Damage) String() string {
	return [...]string{"drop", "empty", "truncate", "garble"}[d]
}

// PowerCut damages the unsynced files and records for which which returns
// true (all of them, and the pack indexes written since the barrier, if
// which is nil), then ends the store handle as the cut ends its process:
// its marker stays, unlocked, and the handle must not be used again. It
// returns the rels damaged. A record is damaged in place, in its pack: its
// bytes zeroed (Drop, Empty: not written), its second half zeroed
// (Truncate), or garbled; when every record appended to a pack since the
// barrier is dropped, the pack is cut back to its size then.
func (f *FaultFS) PowerCut(d Damage, which func(rel string) bool) ([]string, error) {
	var hit []string
	unsynced := f.Unsynced()
	dropped := map[string]int{}
	appended := map[string]int{}
	for _, rel := range unsynced {
		if pack, _, _, _, ok := parseRecordRel(rel); ok {
			appended[pack]++
		}
	}
	cutAt := map[string]int64{}
	for _, rel := range unsynced {
		if which != nil && !which(rel) {
			continue
		}
		if pack, off, _, _, ok := parseRecordRel(rel); ok {
			if err := damageRecord(f.dirFS.abs(pack), off, d); err != nil {
				return hit, err
			}
			dropped[pack]++
			if at, ok := cutAt[pack]; !ok || off < at {
				cutAt[pack] = off
			}
		} else if err := damage(f.dirFS.abs(rel), d); err != nil {
			return hit, err
		}
		hit = append(hit, rel)
	}
	if d == Drop {
		for pack, n := range dropped {
			if n == appended[pack] {
				if err := os.Truncate(f.dirFS.abs(pack), cutAt[pack]); err != nil {
					return hit, err
				}
			}
		}
	}
	if which == nil {
		f.mu.Lock()
		idxs := slices.Clone(f.idxs)
		f.mu.Unlock()
		for _, rel := range idxs {
			if err := damage(f.dirFS.abs(rel), d); err != nil && !os.IsNotExist(err) {
				return hit, err
			}
			hit = append(hit, rel)
		}
	}
	dur := f.s.dur
	dur.mu.Lock()
	if dur.marker != nil {
		dur.marker.Close() // the kernel drops its flock, as at a crash
		dur.marker = nil
	}
	dur.mu.Unlock()
	f.s.pwMu.Lock()
	if f.s.pw != nil {
		f.s.pw.f.Close() // the pack's lock too
		f.s.pw = nil
	}
	f.s.pwMu.Unlock()
	return hit, nil
}

// damageRecord damages the record at off of the pack at p.
func damageRecord(p string, off int64, d Damage) error {
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	h, err := parseRecHeader(b[off:])
	if err != nil {
		return err
	}
	rec := b[off : off+recHeaderSize+int64(h.stored)]
	switch d {
	case Drop, Empty:
		clear(rec)
	case Truncate:
		clear(rec[len(rec)/2:])
	case Garble:
		for i := range rec {
			rec[i] ^= 0x5a
		}
	default:
		return fmt.Errorf("unknown damage %d", d)
	}
	return os.WriteFile(p, b, 0o644)
}

func damage(p string, d Damage) error {
	if d == Drop {
		return os.Remove(p)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	switch d {
	case Empty:
		b = nil
	case Truncate:
		b = b[:len(b)/2]
	case Garble:
		for i := range b {
			b[i] ^= 0x5a
		}
		if len(b) == 0 {
			b = []byte("garbage")
		}
	default:
		return fmt.Errorf("unknown damage %d", d)
	}
	if err := os.Chmod(p, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		return err
	}
	return os.Chmod(p, filePerm)
}

// SetBootID makes the store believe it runs in the boot id (a restart of
// the machine after a power cut); the returned function restores it.
func SetBootID(id string) (restore func()) {
	old := bootID
	bootID = func() string { return id }
	return func() { bootID = old }
}

// Forgeries of a pack's index, for the tests of forged packs: each edits
// the index file of the pack holding object d in place, with its checksum
// made right again, as a forger with the store would.

// ForgeIndexPoint makes the index of d's pack say that d lies where other
// does.
func ForgeIndexPoint(st *Store, d, other Digest) error {
	return forgeIdxOf(st, d, func(b []byte, at func(Digest) int) error {
		i, j := at(d), at(other)
		if i < 0 || j < 0 {
			return fmt.Errorf("%v or %v is not in the index", d, other)
		}
		copy(b[i+32:i+44], b[j+32:j+44]) // offset and stored size
		return nil
	})
}

// ForgeIndexGarble flips a byte of the index of d's pack without making
// its checksum right: an index torn or rotted.
func ForgeIndexGarble(st *Store, d Digest) error {
	l := st.findPacked(d, recObject)
	if len(l) == 0 {
		return fmt.Errorf("%v is not packed", d)
	}
	p := st.dir.abs(idxRel(l[0].pf.name))
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	b[idxRecordsAt+3] ^= 0x40
	os.Chmod(p, 0o644)
	return os.WriteFile(p, b, 0o444)
}

func forgeIdxOf(st *Store, d Digest, edit func(b []byte, at func(Digest) int) error) error {
	l := st.findPacked(d, recObject)
	if len(l) == 0 {
		return fmt.Errorf("%v is not packed", d)
	}
	p := st.dir.abs(idxRel(l[0].pf.name))
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	n := int(binary.LittleEndian.Uint32(b[24:]))
	at := func(x Digest) int {
		for i := range n {
			if o := idxRecordsAt + i*idxRecSize; string(b[o:o+32]) == string(x[:]) {
				return o
			}
		}
		return -1
	}
	if err := edit(b, at); err != nil {
		return err
	}
	body := len(b) - idxTrailerLen
	binary.LittleEndian.PutUint32(b[body:], crc32.Checksum(b[:body], castagnoli))
	os.Chmod(p, 0o644)
	return os.WriteFile(p, b, 0o444)
}
