package artifacts

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxEntrySize bounds what GetEntry reads: an index file larger than this is
// garbage, not an entry (entries are a few hundred bytes plus Meta).
const maxEntrySize = 64 << 20

// Output is one named output of a task.
type Output struct {
	Name   string `json:"name"`
	Digest Digest `json:"digest"`
	Size   int64  `json:"size"`
}

// Entry is the index record of a task: its key, its kind, and the objects it
// produced. Meta is free-form and not interpreted by the store; the pipeline
// keeps the human-readable key preimage there for "explain". An empty Meta
// reads back as nil.
type Entry struct {
	Key     Key               `json:"key"`
	Kind    string            `json:"kind"`
	Outputs []Output          `json:"outputs"` // sorted by Name, names unique
	Meta    map[string]string `json:"meta,omitempty"`
}

// Output returns the output called name.
func (e Entry) Output(name string) (Output, bool) {
	i, ok := slices.BinarySearchFunc(e.Outputs, name, func(o Output, n string) int { return cmp.Compare(o.Name, n) })
	if !ok {
		return Output{}, false
	}
	return e.Outputs[i], true
}

// PutEntry records e under e.Key, replacing any previous entry for that key.
// Outputs are sorted by name (e itself is not modified). Every output object
// must already be in the store with the recorded size: writing objects first
// and the entry last is what makes a crash leave no entry that points at
// nothing. The entry's bytes are JSON with a fixed field order and sorted
// Meta keys (EncodeEntry), appended to the handle's pack (a loose file in a
// scratch store); an entry already there with the same bytes is left as it
// is, others for the key are killed first.
func (s *Store) PutEntry(e Entry) error {
	return s.putEntry(e, !s.scratch && packEntries)
}

// packEntries: entries go into packs (tests of the loose layout clear it).
var packEntries = true

// PutEntryLoose is PutEntry that writes the entry as a loose file,
// index/<2 hex>/<64 hex>.json, replacing the file in place. It is for the
// few entries that are this machine's cache of its own checks and are
// rewritten as the store changes (a lock's seal, a no-op certificate, the
// code memo): rewriting a loose file leaves the packs, and so the stamps
// of a no-op certificate, as they are. A loose entry takes precedence over
// packed ones for the same key (GetEntry reads it first).
func (s *Store) PutEntryLoose(e Entry) error {
	return s.putEntry(e, false)
}

func (s *Store) putEntry(e Entry, packed bool) error {
	if s.untrusted {
		return fmt.Errorf("artifacts: put entry %v: %w", e.Key, s.errUntrusted())
	}
	e.Outputs = slices.Clone(e.Outputs)
	if e.Outputs == nil {
		e.Outputs = []Output{}
	}
	slices.SortFunc(e.Outputs, func(a, b Output) int { return cmp.Compare(a.Name, b.Name) })
	if err := validateEntry(e); err != nil {
		return fmt.Errorf("artifacts: put entry %v: %w", e.Key, err)
	}
	for _, o := range e.Outputs {
		if err := s.objectHasSize(o.Digest, o.Size); err != nil {
			if errors.Is(err, ErrNotFound) {
				return fmt.Errorf("artifacts: put entry %v: output %q: %w (Put outputs before their entry)", e.Key, o.Name, err)
			}
			return fmt.Errorf("artifacts: put entry %v: output %q: %w (Put it again to replace it)", e.Key, o.Name, err)
		}
	}
	data, err := encodeEntry(e)
	if err != nil {
		return fmt.Errorf("artifacts: put entry %v: %w", e.Key, err)
	}
	p := entryRel(e.Key)
	if s.sameBytes(p, data) {
		return nil // a rerun that found the same result: no write, no fsync
	}
	// Something other than a regular file in the entry's place (a
	// directory, a link) would make the rename fail or go astray: move it
	// aside first.
	fi, err := s.dir.lstat(p)
	if err == nil && !fi.Mode().IsRegular() {
		if ce := s.quarantine("index entry", e.Key.String(), p, fi, notRegular(fi)); ce.MoveErr != nil {
			return fmt.Errorf("artifacts: put entry %v: cannot replace it: %w", e.Key, ce)
		}
	}
	if !packed {
		if err := s.writeAtomic(p, data); err != nil {
			return fmt.Errorf("artifacts: put entry %v: %w", e.Key, err)
		}
		return nil
	}
	s.refreshPacks() // (as Put: an entry set aside meanwhile is not one to keep)
	locs := s.findPackedFresh(e.Key, recEntry, true)
	if fi == nil || !fi.Mode().IsRegular() {
		// The packed entry as it stands, unless a loose file (read
		// first) hides it.
		if len(locs) == 1 {
			if _, have, err := s.readRecord(locs[0]); err == nil && bytes.Equal(have, data) {
				return nil
			}
		}
	} else if err := s.dir.remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		// A loose entry of the key would hide the packed one.
		return fmt.Errorf("artifacts: put entry %v: %w", e.Key, s.writeErr(err))
	}
	// The entries it replaces are killed before it is written: a crash in
	// between leaves no entry (a miss, recomputed), never the old one.
	for _, l := range locs {
		if _, err := s.appendRecord(recKill, l.rec.id, l.target().payload()); err != nil {
			return fmt.Errorf("artifacts: put entry %v: %w", e.Key, err)
		}
	}
	if _, err := s.appendRecord(recEntry, e.Key, data); err != nil {
		return fmt.Errorf("artifacts: put entry %v: %w", e.Key, err)
	}
	return nil
}

// GetEntry returns the entry for k. A missing entry is (Entry{}, false, nil).
// An entry that cannot be read back as a valid entry for k (truncated,
// garbage, wrong key) is set aside in corrupt/ and reported as (Entry{},
// false, *CorruptError): the caller should log it and treat it as a miss;
// the next GetEntry(k) is a plain miss. Any other error is an I/O problem or
// a symbolic link on the way (index/ or its fan-out directory), which the
// error names. A loose entry file is read first; then the packs, the last
// live entry of the key in them.
func (s *Store) GetEntry(k Key) (Entry, bool, error) {
	e, found, err := s.getLooseEntry(k)
	if found || err != nil {
		return e, found, err
	}
	var cerr *CorruptError
	var ioErr error
	found = false
	s.visitPacked(k, recEntry, true, func(l packLoc) bool {
		raw, data, rerr := s.readRecord(l)
		if re := (*readError)(nil); errors.As(rerr, &re) {
			ioErr = fmt.Errorf("artifacts: get entry %v: reading %s: %w", k, l.where(s), rerr)
			return true
		}
		if rerr == nil {
			if e, rerr = decodeEntry(data, k); rerr == nil {
				found = true
				return true
			}
		}
		if ce := s.quarantineRecord(l, "index entry", k.String(), raw, rerr.Error()); ce != nil && cerr == nil {
			cerr = ce
		}
		return false
	})
	switch {
	case found:
		return e, true, nil
	case ioErr != nil:
		return Entry{}, false, ioErr
	case cerr != nil:
		return Entry{}, false, cerr
	}
	return Entry{}, false, nil
}

// getLooseEntry is GetEntry of the loose file index/<2 hex>/<64 hex>.json.
func (s *Store) getLooseEntry(k Key) (Entry, bool, error) {
	p := entryRel(k)
	f, err := s.dir.open(p, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Entry{}, false, nil
		}
		if ce := s.quarantineLink("index entry", k.String(), p, err); ce != nil {
			return Entry{}, false, ce
		}
		return Entry{}, false, fmt.Errorf("artifacts: get entry %v: %w", k, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Entry{}, false, fmt.Errorf("artifacts: get entry %v: %w", k, err)
	}
	if why := s.notStoreFile(fi); why != "" {
		return Entry{}, false, s.quarantine("index entry", k.String(), p, fi, why)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxEntrySize+1))
	if err != nil {
		return Entry{}, false, fmt.Errorf("artifacts: get entry %v: reading %s: %w", k, s.dir.abs(p), err)
	}
	e, err := decodeEntry(data, k)
	if err != nil {
		return Entry{}, false, s.quarantine("index entry", k.String(), p, fi, err.Error())
	}
	return e, true, nil
}

// decodeEntry parses an index file strictly: exactly one JSON object with
// known fields, for key want, satisfying validateEntry.
func decodeEntry(data []byte, want Key) (Entry, error) {
	if len(data) > maxEntrySize {
		return Entry{}, fmt.Errorf("larger than %d bytes", maxEntrySize)
	}
	// encoding/json would silently replace invalid UTF-8 with U+FFFD;
	// PutEntry never writes it.
	if !utf8.Valid(data) {
		return Entry{}, errors.New("not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var e Entry
	if err := dec.Decode(&e); err != nil {
		return Entry{}, fmt.Errorf("invalid JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Entry{}, errors.New("trailing data after the JSON object")
	}
	if e.Key != want {
		return Entry{}, fmt.Errorf("file holds key %v", e.Key)
	}
	if e.Outputs == nil {
		return Entry{}, errors.New(`no "outputs" list`)
	}
	if err := validateEntry(e); err != nil {
		return Entry{}, err
	}
	if len(e.Meta) == 0 {
		e.Meta = nil
	}
	return e, nil
}

// encodeEntry is the file format of an entry whose outputs are sorted: JSON
// with a fixed field order (key, kind, outputs, meta), two-space indents,
// sorted Meta keys and a final newline.
func encodeEntry(e Entry) ([]byte, error) {
	data, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// maxNameLen is the longest output name accepted: one path component on
// every common file system.
const maxNameLen = 255

// CheckName checks that name is safe as an output name, that is, as one
// component of a file path on any system: not empty, not "." or "..",
// valid UTF-8 of at most 255 bytes, with no '/', '\\', ':', NUL or other
// control character, and no invisible format character (such as U+202E,
// which reverses the text shown after it). Output names become file names
// (results/, bundles), so a name read from disk (an index entry, a lock)
// is checked before use; the error says what is wrong with it.
func CheckName(name string) error {
	switch {
	case name == "":
		return errors.New("empty name")
	case name == "." || name == "..":
		return fmt.Errorf("name %q is not a file name", name)
	case len(name) > maxNameLen:
		return fmt.Errorf("name %.40q… is %d bytes long, more than %d", name, len(name), maxNameLen)
	case !utf8.ValidString(name):
		return fmt.Errorf("name %q is not valid UTF-8", name)
	}
	if i := strings.IndexFunc(name, func(r rune) bool {
		return r == '/' || r == '\\' || r == ':' || unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
	}); i >= 0 {
		r, _ := utf8.DecodeRuneInString(name[i:])
		if r == '/' || r == '\\' || r == ':' {
			return fmt.Errorf("name %q contains %q: it must be a single path component", name, r)
		}
		return fmt.Errorf("name %q contains the control or format character %U", name, r)
	}
	return nil
}

// validateEntry checks e, whose outputs must already be sorted.
func validateEntry(e Entry) error {
	if e.Key.IsZero() {
		return errors.New("zero key")
	}
	if e.Kind == "" {
		return errors.New("empty kind")
	}
	if !utf8.ValidString(e.Kind) {
		return fmt.Errorf("kind %q is not valid UTF-8", e.Kind)
	}
	for i, o := range e.Outputs {
		if o.Name == "" {
			return fmt.Errorf("output %d has an empty name", i)
		}
		if err := CheckName(o.Name); err != nil {
			return fmt.Errorf("output %d: unsafe %v", i, err)
		}
		switch {
		case i > 0 && e.Outputs[i-1].Name == o.Name:
			return fmt.Errorf("duplicate output name %q", o.Name)
		case i > 0 && e.Outputs[i-1].Name > o.Name:
			return fmt.Errorf("outputs not sorted by name (%q before %q)", e.Outputs[i-1].Name, o.Name)
		case o.Digest.IsZero():
			return fmt.Errorf("output %q has a zero digest", o.Name)
		case o.Size < 0:
			return fmt.Errorf("output %q has negative size %d", o.Name, o.Size)
		}
	}
	for k, v := range e.Meta {
		// encoding/json would silently replace invalid UTF-8, so the entry
		// read back would differ from the one written.
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return fmt.Errorf("meta %q: not valid UTF-8", k)
		}
	}
	return nil
}

// sameBytes reports whether the regular file rel holds exactly data; any
// error reading it counts as "no".
func (s *Store) sameBytes(rel string, data []byte) bool {
	f, err := s.dir.open(rel, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != int64(len(data)) {
		return false
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(len(data))+1))
	return err == nil && bytes.Equal(b, data)
}

// EncodeEntry returns the exact bytes PutEntry writes for e (outputs sorted
// by name, the entry validated): the bytes a remote store signs and ships.
func EncodeEntry(e Entry) ([]byte, error) {
	e.Outputs = slices.Clone(e.Outputs)
	if e.Outputs == nil {
		e.Outputs = []Output{}
	}
	slices.SortFunc(e.Outputs, func(a, b Output) int { return cmp.Compare(a.Name, b.Name) })
	if err := validateEntry(e); err != nil {
		return nil, err
	}
	return encodeEntry(e)
}

// DecodeEntry parses entry bytes from elsewhere (a remote store) as strictly
// as GetEntry reads an index file: one JSON object with known fields, for
// key k, with safe output names.
func DecodeEntry(data []byte, k Key) (Entry, error) { return decodeEntry(data, k) }
