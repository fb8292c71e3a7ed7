package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"thv/artifacts"
)

// DefaultGrace is how old a remote file must be before GC may delete it.
// A writer uploads a task's objects and then its entry within seconds; a
// day covers any push in flight, a clock skew between the server and
// the machines, and a run that uploads as it goes.
const DefaultGrace = 24 * time.Hour

// GCStats counts what GC did (or, dry, would do).
type GCStats struct {
	Entries, EntriesDeleted int
	Objects, ObjectsDeleted int
	Batches, BatchesDeleted int
	Packs, PacksDeleted     int
	BytesDeleted            int64
	Young                   int // unreferenced files kept because they are younger than the grace period
	Foreign                 int // files with names the remote never writes: left alone
}

func (s GCStats) String() string {
	return fmt.Sprintf("deleted %d of %d index entries, %d of %d objects, %d of %d batches and %d of %d packs (%s); kept %d unreferenced files younger than the grace period; left %d files the remote does not write",
		s.EntriesDeleted, s.Entries, s.ObjectsDeleted, s.Objects, s.BatchesDeleted, s.Batches, s.PacksDeleted, s.Packs, bytesString(s.BytesDeleted), s.Young, s.Foreign)
}

// GC deletes from the remote the index entries whose keys keep lacks and
// the objects no remaining entry names, but only files whose modification
// time is older than grace. The grace period is what makes it safe
// against concurrent writers: a writer uploads objects before their entry,
// so the objects of an entry not yet written are young and kept. The one
// race left is a writer that finds an old object present, skips its upload
// and writes an entry naming it just after GC listed the entries: the
// object may then be deleted, and a reader of that entry finds an object
// missing, does not use the entry, computes the task and uploads it again.
// A wrong result can never come of it, only a recomputation.
//
// Batches and packs (batch.go) are kept whole: a batch while any of its
// entries is kept (or it is young), a pack while a kept batch names it (or
// it is young). A pack no batch names (a push interrupted before its
// batch) goes once it is older than the grace period.
func (rm *Remote) GC(ctx context.Context, keep map[artifacts.Key]bool, grace time.Duration, dryRun bool, now time.Time) (GCStats, error) {
	var st GCStats
	old := func(i Info) bool { return now.Sub(i.ModTime) > grace }
	if err := rm.gcBatches(ctx, keep, old, dryRun, &st); err != nil {
		return st, err
	}
	referenced := map[artifacts.Digest]bool{}
	var doomed []Info
	err := rm.r.list(ctx, "index/", func(i Info) error {
		k, ok := parseName(i.Name, "index/", ".json")
		if !ok {
			st.Foreign++
			return nil
		}
		st.Entries++
		if keep[artifacts.Key(k)] || !old(i) {
			if !keep[artifacts.Key(k)] {
				st.Young++
			}
			// Its objects stay: read which they are (without the trust
			// check: GC keeps what any entry names).
			data, err := rm.r.get(ctx, i.Name, maxEnvelope)
			if err != nil {
				if isNotExist(err) || errors.Is(err, ErrRefused) {
					return nil // gone, or no entry this remote wrote
				}
				return err
			}
			for _, d := range entryDigests(data, artifacts.Key(k)) {
				referenced[d] = true
			}
			return nil
		}
		doomed = append(doomed, i)
		return nil
	})
	if err != nil {
		return st, err
	}
	for _, i := range doomed {
		if !dryRun {
			if err := rm.r.del(ctx, i.Name); err != nil {
				return st, err
			}
		}
		st.EntriesDeleted++
	}
	var objs []Info
	err = rm.r.list(ctx, "objects/", func(i Info) error {
		d, ok := parseName(i.Name, "objects/", "")
		switch {
		case !ok:
			st.Foreign++
		case referenced[artifacts.Digest(d)]:
			st.Objects++
		case !old(i):
			st.Objects++
			st.Young++
		default:
			st.Objects++
			objs = append(objs, i)
		}
		return nil
	})
	if err != nil {
		return st, err
	}
	for _, i := range objs {
		if !dryRun {
			if err := rm.r.del(ctx, i.Name); err != nil {
				return st, err
			}
		}
		st.ObjectsDeleted++
		st.BytesDeleted += i.Size
	}
	return st, nil
}

// parseName reads "<dir><2 hex>/<64 hex><ext>", the names the remote writes.
func parseName(name, dir, ext string) ([32]byte, bool) {
	var h [32]byte
	rest, ok := strings.CutPrefix(name, dir)
	if !ok {
		return h, false
	}
	rest, ok = strings.CutSuffix(rest, ext)
	if !ok || len(rest) != 2+1+64 || rest[2] != '/' || rest[:2] != rest[3:5] {
		return h, false
	}
	d, err := artifacts.ParseDigest("sha256:" + rest[3:])
	if err != nil {
		return h, false
	}
	return d, true
}

// entryDigests lists the objects an envelope's entry names; a malformed
// envelope names none.
func entryDigests(data []byte, k artifacts.Key) []artifacts.Digest {
	dec := json.NewDecoder(bytes.NewReader(data))
	var env envelope
	if dec.Decode(&env) != nil {
		return nil
	}
	e, err := artifacts.DecodeEntry(env.Entry, k)
	if err != nil {
		return nil
	}
	var ds []artifacts.Digest
	for _, o := range e.Outputs {
		ds = append(ds, o.Digest)
	}
	return ds
}

// gcBatches is GC's part for batches and packs.
func (rm *Remote) gcBatches(ctx context.Context, keep map[artifacts.Key]bool, old func(Info) bool, dryRun bool, st *GCStats) error {
	idx, err := rm.loadIndex(ctx)
	if err != nil {
		return err
	}
	readable := map[string]bool{}
	named := map[string]bool{} // packs a kept batch names
	for _, lb := range idx.batches {
		readable[lb.info.Name] = true
		st.Batches++
		kept := false
		for _, e := range lb.b.Entries {
			kept = kept || keep[e.Key]
		}
		if !kept && !old(lb.info) {
			st.Young++
			kept = true
		}
		if !kept {
			if !dryRun {
				if err := rm.r.del(ctx, lb.info.Name); err != nil {
					return err
				}
			}
			st.BatchesDeleted++
			st.BytesDeleted += lb.info.Size
			continue
		}
		for _, p := range lb.b.Packs {
			named[p.Name] = true
		}
	}
	// A batch that did not check is left (it is not read, never used).
	err = rm.r.list(ctx, batchesPrefix, func(i Info) error {
		if _, ok := parseHexName(i.Name, batchesPrefix, batchExt); !ok {
			st.Foreign++
		} else if !readable[i.Name] {
			st.Batches++
		}
		return nil
	})
	if err != nil {
		return err
	}
	var doomed []Info
	err = rm.r.list(ctx, packsPrefix, func(i Info) error {
		h, ok := parseHexName(i.Name, packsPrefix, packExt)
		switch {
		case !ok:
			st.Foreign++
		case named[h]:
			st.Packs++
		case !old(i):
			st.Packs++
			st.Young++
		default:
			st.Packs++
			doomed = append(doomed, i)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, i := range doomed {
		if !dryRun {
			if err := rm.r.del(ctx, i.Name); err != nil {
				return err
			}
		}
		st.PacksDeleted++
		st.BytesDeleted += i.Size
	}
	if !dryRun {
		rm.idxMu.Lock()
		rm.idx = nil // read again
		rm.idxMu.Unlock()
	}
	return nil
}
