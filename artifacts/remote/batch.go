package remote

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"

	"thv/artifacts"
)

// Packs and batches: thv push and thv pull move a lock's results in a few
// large requests, not one per object and one per entry (requests, not
// bytes, were the cost: the paper's 22,000 objects and 7,466 entries took
// 77 s to push over loopback). A push uploads
//
//	packs/<64 hex>.pack      objects, concatenated and zstd-compressed; the
//	                         name is the SHA-256 of the file
//	batches/<64 hex>.batch   the signed entries of the tasks whose objects
//	                         are all in packs already uploaded, and where
//	                         each of their objects lies (pack, offset,
//	                         size); zstd-compressed JSON, named by the
//	                         SHA-256 of the file
//
// packs first, each batch after the packs it names, so that a reader never
// finds an entry whose objects are not there; a push that is interrupted
// leaves packs that no batch names (which a reader never looks at, and GC
// removes after the grace period), never a batch without its packs. Each
// file is one PUT (one rename for file://): visible whole or not at all;
// and a reader re-hashes every pack and every batch against its name, and
// every object against its digest, before anything of it is used: a pack
// cut short by an interrupted upload, or edited, is not used. Each entry
// in a batch is an envelope signed on its own (envelope.go): a batch
// vouches for nothing, its entries are used only if signed by a trusted
// key, as a per-task entry is.
//
// Publish, the upload after each task of a run, writes the per-task layout
// (objects/, index/), and Fetch, the read-through on a local miss, reads it
// first and then the batches.

const (
	batchFormat   = "thv-remote-batch 1"
	packsPrefix   = "packs/"
	batchesPrefix = "batches/"
	packExt       = ".pack"
	batchExt      = ".batch"

	// maxBatch bounds a batch as stored, maxUnpacked what a pack or a
	// batch decompresses to: a reader never holds more.
	maxBatch    = 256 << 20
	maxUnpacked = 1 << 30
)

// remotePackSize is the bytes of objects a push puts in one pack (before
// compression), and so how often it writes a batch, unless
// Options.PackSize says otherwise. Tests make it small.
var remotePackSize = 32 << 20

// batchFile is a batch as stored (before compression).
type batchFile struct {
	Format  string        `json:"format"`
	Packs   []batchPack   `json:"packs"`
	Objects []batchObject `json:"objects"`
	Entries []batchEntry  `json:"entries"`
}

// batchPack names a pack: its SHA-256 (its file's name), its size as
// stored and once decompressed.
type batchPack struct {
	Name     string `json:"name"`
	Size     int64  `json:"size"`
	Unpacked int64  `json:"unpacked"`
}

// batchObject says where an object lies: Packs[Pack], from Offset, Size
// bytes of the decompressed pack.
type batchObject struct {
	Digest artifacts.Digest `json:"digest"`
	Pack   int              `json:"pack"`
	Offset int64            `json:"offset"`
	Size   int64            `json:"size"`
}

// batchEntry is a signed envelope (envelope.go, its exact bytes) filed
// under Key.
type batchEntry struct {
	Key      artifacts.Key   `json:"key"`
	Envelope json.RawMessage `json:"envelope"`
}

func packName(h string) string  { return packsPrefix + h + packExt }
func batchName(h string) string { return batchesPrefix + h + batchExt }

// The codec of packs and batches.
var (
	remoteEnc = sync.OnceValue(func() *zstd.Encoder {
		e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest))
		if err != nil {
			panic(err)
		}
		return e
	})
	remoteDec = sync.OnceValue(func() *zstd.Decoder {
		d, err := zstd.NewReader(nil, zstd.WithDecoderMaxMemory(maxUnpacked))
		if err != nil {
			panic(err)
		}
		return d
	})
)

// seal compresses data and returns it with the hex SHA-256 that names it.
func seal(data []byte) ([]byte, string) {
	z := remoteEnc().EncodeAll(data, nil)
	h := sha256.Sum256(z)
	return z, hex.EncodeToString(h[:])
}

// unseal checks that data hashes to h (its name) and decompresses it to
// exactly want bytes (or at most maxUnpacked, if want < 0).
func unseal(data []byte, h string, want int64) ([]byte, error) {
	sum := sha256.Sum256(data)
	if hex.EncodeToString(sum[:]) != h {
		return nil, fmt.Errorf("its %d bytes hash to %x, not to its name (cut short, or edited)", len(data), sum)
	}
	limit := want
	if limit < 0 || limit > maxUnpacked {
		limit = maxUnpacked
	}
	out, err := remoteDec().DecodeAll(data, make([]byte, 0, min(limit, 64<<20)))
	if err != nil {
		return nil, fmt.Errorf("does not decompress: %v", err)
	}
	if want >= 0 && int64(len(out)) != want || int64(len(out)) > maxUnpacked {
		return nil, fmt.Errorf("decompresses to %d bytes, want %d", len(out), want)
	}
	return out, nil
}

// parseHexName reads "<dir><64 hex><ext>".
func parseHexName(name, dir, ext string) (string, bool) {
	rest, ok := strings.CutPrefix(name, dir)
	if !ok {
		return "", false
	}
	rest, ok = strings.CutSuffix(rest, ext)
	if !ok || len(rest) != 64 {
		return "", false
	}
	if _, err := hex.DecodeString(rest); err != nil || strings.ToLower(rest) != rest {
		return "", false
	}
	return rest, true
}

// decodeBatch reads a batch's decompressed bytes strictly and checks its
// references: every object in one of its packs, within its decompressed
// size, every entry's key and envelope present.
func decodeBatch(data []byte) (*batchFile, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var b batchFile
	if err := dec.Decode(&b); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data")
	}
	if b.Format != batchFormat {
		return nil, fmt.Errorf("format %q, want %q", b.Format, batchFormat)
	}
	for _, p := range b.Packs {
		if len(p.Name) != 64 || p.Size < 0 || p.Unpacked < 0 || p.Unpacked > maxUnpacked {
			return nil, fmt.Errorf("a malformed pack %q", p.Name)
		}
		if _, err := hex.DecodeString(p.Name); err != nil {
			return nil, fmt.Errorf("a malformed pack %q", p.Name)
		}
	}
	for _, o := range b.Objects {
		if o.Pack < 0 || o.Pack >= len(b.Packs) || o.Offset < 0 || o.Size < 0 || o.Offset+o.Size > b.Packs[o.Pack].Unpacked {
			return nil, fmt.Errorf("object %v lies outside its pack", o.Digest)
		}
	}
	for _, e := range b.Entries {
		if e.Key.IsZero() || len(e.Envelope) == 0 {
			return nil, errors.New("an entry without key or envelope")
		}
	}
	return &b, nil
}

// objectLoc is where an object lies on the remote.
type objectLoc struct {
	pack   batchPack
	offset int64
	size   int64
}

// remoteIndex is what the batches on the remote say: the signed entries of
// each key (in no order of trust: each is checked when used) and where
// each object lies (every place a batch names, in the batches' order: a
// reader takes the first that checks, so a push that replaced a bad pack
// is found past it).
type remoteIndex struct {
	entries map[artifacts.Key][]json.RawMessage
	objects map[artifacts.Digest][]objectLoc
	batches []loadedBatch
}

// loadedBatch is one batch as read, for GC.
type loadedBatch struct {
	info Info
	b    *batchFile
}

// loadIndex reads every batch on the remote (a listing and a GET each, in
// parallel). A batch that does not check (its name, its bytes) is left
// out and said so in the log.
func (rm *Remote) loadIndex(ctx context.Context) (*remoteIndex, error) {
	var infos []Info
	if err := rm.r.list(ctx, batchesPrefix, func(i Info) error {
		if _, ok := parseHexName(i.Name, batchesPrefix, batchExt); ok {
			infos = append(infos, i)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	slices.SortFunc(infos, func(a, b Info) int { return strings.Compare(a.Name, b.Name) })
	batches := make([]*batchFile, len(infos))
	errs := make([]error, len(infos))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i, info := range infos {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			h, _ := parseHexName(info.Name, batchesPrefix, batchExt)
			data, err := rm.r.get(ctx, info.Name, maxBatch)
			if errors.Is(err, ErrRefused) {
				rm.log.Warn("remote batch not used", "batch", info.Name, "remote", rm.URL(), "why", err)
				return
			}
			if err != nil {
				errs[i] = err
				return
			}
			raw, err := unseal(data, h, -1)
			if err == nil {
				batches[i], err = decodeBatch(raw)
			}
			if err != nil {
				rm.log.Warn("remote batch not used", "batch", info.Name, "remote", rm.URL(), "why", err)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil && !isNotExist(err) {
			return nil, err
		}
	}
	idx := &remoteIndex{entries: map[artifacts.Key][]json.RawMessage{}, objects: map[artifacts.Digest][]objectLoc{}}
	for i, b := range batches {
		if b == nil {
			continue
		}
		idx.batches = append(idx.batches, loadedBatch{info: infos[i], b: b})
		for _, e := range b.Entries {
			idx.entries[e.Key] = append(idx.entries[e.Key], e.Envelope)
		}
		for _, o := range b.Objects {
			loc := objectLoc{pack: b.Packs[o.Pack], offset: o.Offset, size: o.Size}
			if !slices.Contains(idx.objects[o.Digest], loc) {
				idx.objects[o.Digest] = append(idx.objects[o.Digest], loc)
			}
		}
	}
	return idx, nil
}

// index returns the batches' index, read once per Remote (a run's, a
// push's or a pull's).
func (rm *Remote) index(ctx context.Context) (*remoteIndex, error) {
	rm.idxMu.Lock()
	defer rm.idxMu.Unlock()
	if rm.idx == nil {
		idx, err := rm.loadIndex(ctx)
		if err != nil {
			return nil, err
		}
		rm.idx = idx
	}
	return rm.idx, nil
}

// packCacheSize bounds the packs a Remote keeps in memory for Fetch, which
// reads objects one entry at a time from packs downloaded whole.
const packCacheSize = 256 << 20

// pack returns the decompressed bytes of pack p, downloaded once and
// checked against its name (a Fetch of the next entry of the same pack
// finds it in memory).
func (rm *Remote) pack(ctx context.Context, p batchPack) ([]byte, error) {
	rm.packMu.Lock()
	if b, ok := rm.packs[p.Name]; ok {
		rm.packMu.Unlock()
		return b, nil
	}
	rm.packMu.Unlock()
	raw, err := rm.downloadPack(ctx, p)
	if err != nil {
		return nil, err
	}
	rm.packMu.Lock()
	defer rm.packMu.Unlock()
	if rm.packs == nil {
		rm.packs = map[string][]byte{}
	}
	for name, b := range rm.packs { // keep the cache bounded: drop others
		if rm.packBytes+int64(len(raw)) <= packCacheSize {
			break
		}
		rm.packBytes -= int64(len(b))
		delete(rm.packs, name)
	}
	if int64(len(raw)) <= packCacheSize {
		rm.packs[p.Name] = raw
		rm.packBytes += int64(len(raw))
	}
	return raw, nil
}

// downloadPack downloads pack p (at most the size its batch states) and
// returns its decompressed bytes, checked against its name.
func (rm *Remote) downloadPack(ctx context.Context, p batchPack) ([]byte, error) {
	data, err := rm.r.get(ctx, packName(p.Name), p.Size)
	if err != nil {
		return nil, err
	}
	raw, err := unseal(data, p.Name, p.Unpacked)
	if err != nil {
		return nil, fmt.Errorf("the remote pack %s %w: %w", packName(p.Name), errCorruptObject, err)
	}
	return raw, nil
}

// packOK reports whether the remote's pack p has the bytes its name says.
func (rm *Remote) packOK(ctx context.Context, p batchPack) bool {
	_, err := rm.downloadPack(ctx, p)
	return err == nil
}

// checkPlaces finds, for each object of outs that the batches place on the
// remote, the first place where it checks, as a reader would (its pack
// downloaded, checked against its name, the object's bytes against its
// digest): the names vouch for nothing. Each pack is downloaded once (jobs
// at once) and not kept. An object placed only where it does not check is
// marked bad: a push packs it again and pushes its entries again, as
// Publish replaces a bad object. If the remote fails, the error says so.
func (rm *Remote) checkPlaces(ctx context.Context, idx *remoteIndex, outs map[artifacts.Digest]int64, jobs int) (map[artifacts.Digest]objectLoc, error) {
	placed := map[artifacts.Digest]objectLoc{}
	tried := map[artifacts.Digest]int{} // places tried
	for {
		byPack := map[string][]artifacts.Digest{}
		packs := map[string]batchPack{}
		for d, size := range outs {
			if _, ok := placed[d]; ok {
				continue
			}
			locs := idx.objects[d]
			for tried[d] < len(locs) && locs[tried[d]].size != size {
				tried[d]++
			}
			if tried[d] == len(locs) {
				if len(locs) > 0 {
					rm.markBad(d)
				}
				continue
			}
			loc := locs[tried[d]]
			tried[d]++
			byPack[loc.pack.Name] = append(byPack[loc.pack.Name], d)
			packs[loc.pack.Name] = loc.pack
		}
		if len(byPack) == 0 {
			return placed, nil
		}
		var mu sync.Mutex
		var failure error
		var wg sync.WaitGroup
		sem := make(chan struct{}, max(1, jobs))
		for name, ds := range byPack {
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				raw, err := rm.downloadPack(ctx, packs[name])
				if err != nil {
					if remoteFailed(ctx, err) {
						mu.Lock()
						failure = err
						mu.Unlock()
					} else {
						rm.log.Warn("remote pack not used", "pack", packName(name), "remote", rm.URL(), "why", err)
					}
					return
				}
				for _, d := range ds {
					for _, loc := range idx.objects[d][:tried[d]] {
						if loc.pack.Name == name && loc.size == outs[d] {
							if _, err := objectFrom(raw, loc, d); err == nil {
								mu.Lock()
								placed[d] = loc
								mu.Unlock()
								break
							}
						}
					}
				}
			})
		}
		wg.Wait()
		if failure != nil {
			return nil, failure
		}
	}
}

// object returns object d from the pack loc names, checked: its bytes must
// hash to d.
func objectFrom(pack []byte, loc objectLoc, d artifacts.Digest) ([]byte, error) {
	b := pack[loc.offset : loc.offset+loc.size]
	if got := artifacts.Sum(b); got != d {
		return nil, fmt.Errorf("its %d bytes in pack %s hash to %v", len(b), loc.pack.Name, got)
	}
	return b, nil
}

// fetchBatched is Fetch of a key the per-task layout does not hold: from
// the batches, the first of its entries that is signed by a trusted key,
// of the kind asked for, every object of which is in a pack and checks.
// found says whether a batch holds an entry for key; if none is used, why
// says why (for the first) and signer who signed it.
func (rm *Remote) fetchBatched(ctx context.Context, st *artifacts.Store, key artifacts.Key, kind string) (e artifacts.Entry, found bool, why error, signer string) {
	idx, err := rm.index(ctx)
	if err != nil {
		return e, true, err, ""
	}
	envs := idx.entries[key]
	if len(envs) == 0 {
		return e, false, nil, ""
	}
	for _, env := range envs {
		op := openEnvelope(env, key, rm.trusted)
		e, err := rm.useEntry(ctx, st, idx, op, key, kind, nil)
		if err == nil {
			return e, true, nil, ""
		}
		if why == nil {
			why, signer = err, op.signer
		}
	}
	return artifacts.Entry{}, true, why, signer
}

// remoteFailed reports whether err is the remote failing (or the run
// being cancelled) rather than an entry found unusable: reported once, at
// the end (Failure), not counted as an entry not used.
func remoteFailed(ctx context.Context, err error) bool {
	var failed *RemoteError
	return ctx.Err() != nil || errors.Is(err, errDown) || errors.As(err, &failed)
}

// opened is an envelope checked by openEntry: its entry, or why it is not
// to be used.
type opened struct {
	e      artifacts.Entry
	signer string
	err    error
}

func openEnvelope(env []byte, k artifacts.Key, trusted []PublicKey) opened {
	e, signer, err := openEntry(env, k, trusted)
	return opened{e, signer, err}
}

// useEntry takes the entry of an envelope for key (openEnvelope: signed by
// a trusted key; of kind), fetches its objects from their packs into st
// (each checked) and then its entry. absent, if not nil, says which
// objects st was found to lack (the others are checked in st first).
func (rm *Remote) useEntry(ctx context.Context, st *artifacts.Store, idx *remoteIndex, op opened, key artifacts.Key, kind string, absent map[artifacts.Digest]bool) (artifacts.Entry, error) {
	e, err := op.e, op.err
	if err != nil {
		return e, err
	}
	if kind != "" && e.Kind != kind {
		return e, fmt.Errorf("%w: kind %q, the task is a %q", ErrBadEntry, e.Kind, kind)
	}
	if len(e.Outputs) == 0 {
		return e, fmt.Errorf("%w: no outputs", ErrBadEntry)
	}
	for _, o := range e.Outputs {
		if !absent[o.Digest] && st.Has(o.Digest) && st.Verify(o.Digest) == nil {
			continue
		}
		b, err := rm.objectOf(ctx, idx, o)
		if err != nil {
			return e, err
		}
		if _, err := st.Put(b); err != nil {
			return e, fmt.Errorf("output %q: storing it locally: %w", o.Name, err)
		}
		rm.Stats.ObjectsFetched.Add(1)
		rm.Stats.BytesFetched.Add(int64(len(b)))
	}
	if err := st.PutEntry(e); err != nil {
		return e, fmt.Errorf("storing the entry locally: %w", err)
	}
	return e, nil
}

// objectOf returns output o's bytes from the first place on the remote
// where they check (its pack downloaded, checked against its name, and the
// object's bytes against its digest). If there is no such place, o's
// object is marked bad (a push uploads it again) and the error says why,
// wrapping errMissingObject or errCorruptObject.
func (rm *Remote) objectOf(ctx context.Context, idx *remoteIndex, o artifacts.Output) ([]byte, error) {
	var why error
	for _, loc := range idx.objects[o.Digest] {
		if loc.size != o.Size {
			why = fmt.Errorf("output %q: the remote object %v %w: %d bytes in pack %s, the entry says %d", o.Name, o.Digest, errCorruptObject, loc.size, loc.pack.Name, o.Size)
			continue
		}
		pack, err := rm.pack(ctx, loc.pack)
		if err != nil {
			if remoteFailed(ctx, err) {
				return nil, fmt.Errorf("output %q: %w", o.Name, err) // the remote failed, not the object
			}
			if isNotExist(err) {
				why = fmt.Errorf("output %q: object %v %w (pack %s is not)", o.Name, o.Digest, errMissingObject, packName(loc.pack.Name))
			} else {
				why = fmt.Errorf("output %q: %w", o.Name, err) // errCorruptObject, ErrRefused or another fault
			}
			continue
		}
		b, err := objectFrom(pack, loc, o.Digest)
		if err != nil {
			why = fmt.Errorf("output %q: the remote object %v %w: %w", o.Name, o.Digest, errCorruptObject, err)
			continue
		}
		return b, nil
	}
	if why == nil {
		return nil, fmt.Errorf("output %q: object %v %w (in no pack)", o.Name, o.Digest, errMissingObject)
	}
	rm.markBad(o.Digest)
	return nil, why
}

// anyBad reports whether an output of e was found corrupt on the remote.
func (rm *Remote) anyBad(e artifacts.Entry) bool {
	for _, o := range e.Outputs {
		if rm.isBad(o.Digest) {
			return true
		}
	}
	return false
}
