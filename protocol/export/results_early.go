package export

import (
	"os"
	"path/filepath"

	"thv/artifacts"
)

// An export with nothing to write spends its time reading results/ to
// find every file current (currentResults), after the pass. What results/
// holds does not depend on the pass, so thv repro reads it while the lock
// is parsed (Options.EarlyNoopCheck), when the cores are not both busy,
// and an export after a pass that executed nothing uses what was seen then;
// a file that was not there, or could not be read, is read again.

// seenFile is what a file of results/ held: its SHA-256, or for a PNG
// its stamp and the digest of its image data (readPNGStamp's parts; a PNG
// has no sum here, and is never taken for a file of another kind).
type seenFile struct {
	sum      artifacts.Digest
	png      bool
	stamp    string
	imageSum [32]byte
}

// current is resultFile f's currentResults verdict on what was seen.
func (s *seenFile) current(f *resultFile) bool {
	if f.png != nil {
		return s.png && s.stamp == pngStamp(f.png.source(), s.imageSum)
	}
	return s.sum == f.digest
}

// resultsSeen is results/ as seen early: by path relative to the results
// directory (sub/name).
type resultsSeen struct {
	done  chan struct{}
	files map[string]*seenFile
}

// seeResults starts reading the regular files of root, root/tables and
// root/figures, on one goroutine with one buffer.
func seeResults(root string) *resultsSeen {
	r := &resultsSeen{done: make(chan struct{}), files: map[string]*seenFile{}}
	go func() {
		defer close(r.done)
		var buf []byte
		for _, sub := range []string{"", "tables", "figures"} {
			ents, err := os.ReadDir(filepath.Join(root, sub))
			if err != nil {
				continue
			}
			for _, e := range ents {
				if !e.Type().IsRegular() {
					continue
				}
				if buf, err = readFileInto(filepath.Join(root, sub, e.Name()), buf); err != nil {
					continue
				}
				s := &seenFile{}
				if filepath.Ext(e.Name()) == ".png" {
					s.stamp, s.imageSum, err = pngStampParts(buf)
					s.png = err == nil
				}
				if !s.png { // (a PNG is judged by its stamp and image data alone: current)
					s.sum = artifacts.Sum(buf)
				}
				r.files[filepath.Join(sub, e.Name())] = s
			}
		}
	}()
	return r
}

// file waits for the reading and returns what was seen of sub/name.
func (r *resultsSeen) file(sub, name string) (*seenFile, bool) {
	<-r.done
	s, ok := r.files[filepath.Join(sub, name)]
	return s, ok
}
