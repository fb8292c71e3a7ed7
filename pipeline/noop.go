package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime/trace"
	"slices"
	"strconv"
	"sync"

	"thv/artifacts"
)

// A pass that finds every task up to date spends most of its time proving
// it: planning the DAG, computing thousands of keys, expanding the collect
// and figure tasks. When nothing changed, all of that gives the same
// answer as last time. So after a complete pass whose lock is sealed
// (seal.go), the store keeps a no-op certificate: an index entry whose key
// is derived from this binary's code, the protocol's plan digest
// (Project.PlanDigest: everything besides the binary that the plan is
// built from) and the SHA-256 of the lock's bytes, with one object listing
// the objects the pass read to expand its tasks. The binary enters as its
// code fingerprint (codeid's Fingerprint): its build ID, which covers the
// planner and the normaliser, and every source file, module and toolchain
// its code identities are computed from.
//
// Given the same code (hence every code identity, and the planner), the
// same plan digest (hence the same plan and parameters) and the same sealed
// lock (hence the same input digests, the
// same keys, each equal to its record's), a full pass would decide every
// task from its lock record, and its result depends on the store in
// exactly three ways, which the fast path checks as the full pass does:
// the seal still holds (no quarantine since: sealed), every recorded
// output is present (a regular file under its name), and every
// object the expansion read is still intact (read and re-hashed, as Get
// does; a corrupt one is quarantined, which also breaks the seal). If
// any check fails, or there is no certificate, the full pass runs and
// decides as before. Like a seal or the code memo, a certificate is this
// machine's cache, never evidence: a pass that honours no seal
// (IgnoreSeal: Verify, verify-bundle) never looks for one.

const noopKind = "no-op"

// noopMagic heads a certificate's object (and enters its key: a
// certificate of another layout is never found).
const noopMagic = "thv no-op v4\n"

func noopKey(code, plan string, lock artifacts.Digest) artifacts.Key {
	return sha256.Sum256([]byte(noopMagic + code + "\n" + plan + "\n" + lock.String()))
}

// A certificate is what a no-op pass checks beyond the seal: the objects
// the expansion read (re-hashed), and the stamps of the packs and of the
// fan-out directories taken before every output of the lock was found
// present (artifacts.StampDirs: while the packs' stamp and a directory's
// are unchanged, its objects need not be looked up again to find them
// present; a zero stamp is always looked up). The reads are an object,
// the same for every certificate of one lock; the stamps are in the
// certificate's index entry (its Meta "stamps"), a loose file
// (PutEntryLoose), so that renewing the stamps (renewStamps) writes only
// in index/ and changes neither the packs nor a fan-out directory.
type certificate struct {
	reads  []artifacts.Digest
	stamps artifacts.DirStamps
}

// encode lays a certificate out: its object (the magic, the count, the
// digests the pass read: raw, sorted and unique) and its entry's field:
// the stamps (DirStamps.MarshalBinary, in unpadded base64).
func (c *certificate) encode() (object []byte, meta map[string]string) {
	st, _ := c.stamps.MarshalBinary()
	return c.object(), map[string]string{"stamps": base64.RawStdEncoding.EncodeToString(st)}
}

// object is the certificate's object (encode).
func (c *certificate) object() []byte {
	b := append([]byte(noopMagic), strconv.Itoa(len(c.reads))...)
	b = append(b, '\n')
	for _, d := range c.reads {
		b = append(b, d[:]...)
	}
	return b
}

// decodeCertificate reads encode's form.
func decodeCertificate(object []byte, meta map[string]string) (*certificate, error) {
	rest, ok := bytes.CutPrefix(object, []byte(noopMagic))
	nl := bytes.IndexByte(rest, '\n')
	if !ok || nl < 0 {
		return nil, errors.New("not a no-op certificate")
	}
	n, err := strconv.Atoi(string(rest[:nl]))
	rest = rest[nl+1:]
	size := len(artifacts.Digest{})
	if err != nil || n < 0 || len(rest) != n*size {
		return nil, errors.New("no-op certificate: malformed count")
	}
	c := &certificate{reads: make([]artifacts.Digest, n)}
	for i := range c.reads {
		copy(c.reads[i][:], rest[i*size:])
	}
	st, err := base64.RawStdEncoding.Strict().DecodeString(meta["stamps"])
	if err != nil {
		return nil, fmt.Errorf("no-op certificate: stamps: %w", err)
	}
	if err := c.stamps.UnmarshalBinary(st); err != nil {
		return nil, fmt.Errorf("no-op certificate: %w", err)
	}
	return c, nil
}

// StartFingerprint starts computing the code fingerprint that a no-op
// certificate is keyed by (codeid's Fingerprint: a few milliseconds of
// hashing the embedded sources), so that it overlaps with the caller's
// other work (reading the lock); certificateKey then waits for it.
func (k *Kinds) StartFingerprint() {
	if m, ok := k.binaryModule(); ok {
		go m.Fingerprint()
	}
}

// certificateKey returns the key of p's certificate, if p can have one.
func (p *Project) certificateKey() (artifacts.Key, bool) {
	m, ok := p.Kinds.binaryModule()
	if !ok || p.IgnoreSeal || p.PlanDigest == "" || layerOff("certificate") || p.Lock == nil || p.Lock.digest.IsZero() || len(p.Lock.Tasks) == 0 {
		return artifacts.Key{}, false
	}
	code, err := m.Fingerprint()
	if err != nil {
		return artifacts.Key{}, false
	}
	return noopKey(code, p.PlanDigest, p.Lock.digest), true
}

// loadCertificate returns the certificate under key, if the store holds it
// for the lock whose bytes hash to lock.
func loadCertificate(st *artifacts.Store, key artifacts.Key, lock artifacts.Digest) (*certificate, bool) {
	e, found, err := st.GetEntry(key)
	if err != nil || !found || e.Kind != noopKind || e.Meta["lock"] != lock.String() || len(e.Outputs) != 1 {
		return nil, false
	}
	data, err := st.Get(e.Outputs[0].Digest)
	if err != nil {
		return nil, false
	}
	cert, err := decodeCertificate(data, e.Meta)
	if err == nil && layerOff("stamps") {
		cert.stamps = artifacts.DirStamps{} // a zero stamp never holds
	}
	return cert, err == nil
}

// fastNoop returns the report of a pass in which every task is up to date,
// built from the lock's records without planning, when the store holds
// this project's certificate and every check the full pass would make
// holds (see above). ok false: run the full pass. If renew is set (a pass
// that may write to the store), a certificate whose stamps the presence
// check renewed is written again with them (renewStamps).
func (p *Project) fastNoop(renew bool) (rep *Report, ok bool) {
	key, ok := p.certificateKey()
	if !ok {
		return nil, false
	}
	if !sealed(p.Store, p.Lock) {
		return nil, false
	}
	cert, ok := loadCertificate(p.Store, key, p.Lock.digest)
	if !ok {
		return nil, false
	}
	// The two checks left and the report do not depend on one another:
	// they run at once, on the machine's cores. (The re-hash may
	// quarantine a corrupt object while the presence check runs; either
	// check failing sends the pass to the full pass, which finds the
	// store as it then is.)
	region := trace.StartRegion(context.Background(), "no-op checks")
	var readsOK bool
	var wg sync.WaitGroup
	wg.Go(func() { readsOK = p.Store.VerifyAll(cert.reads) })
	present, renewed := p.outputsPresent(&cert.stamps)
	if present {
		rep = p.lockReport()
	}
	wg.Wait()
	region.End()
	if !present || !readsOK {
		return nil, false // a corrupt object is quarantined now: the full pass recomputes it
	}
	if renew {
		p.renewStamps(key, cert, renewed)
	}
	return rep, true
}

// outputsPresent reports whether every output the lock records is
// present, checked as the full pass would find it missing (HasAll: the
// fan-out directories, looked up or read whole, on several goroutines,
// except those whose stamp is still since's), and false if a record has no
// output. renewed are the stamps that check leaves (HasAllRestamp), or nil
// where some outputs were found in the shared listing instead: a stamp
// taken after that listing was read cannot stand for what it found.
func (p *Project) outputsPresent(since *artifacts.DirStamps) (present bool, renewed *artifacts.DirStamps) {
	outs, ok := p.lockOutputs()
	if !ok {
		return false, nil
	}
	if listed, ok := p.Shared.objects(p.Store); ok {
		missing := outs[:0]
		for _, d := range outs {
			if !listed.Has(d) {
				missing = append(missing, d)
			}
		}
		return p.Store.HasAllSince(missing, since), nil
	}
	return p.Store.HasAllRestamp(outs, since)
}

// renewStamps writes the certificate under key again with the stamps a
// no-op's presence check renewed, if that gives a directory a stamp it did
// not have: after a pass that executed tasks (whose certificate stamps
// none of the directories it had just written) or another protocol's pass
// in the same store, the first no-op reads the directories, and the next
// ones need not. (A directory read again but changed too recently for a
// stamp is no reason to write: its old stamp matches nothing either.) It
// rewrites only the certificate's index entry. It is this machine's cache:
// a failure (a read-only store) leaves the certificate as it was.
func (p *Project) renewStamps(key artifacts.Key, cert *certificate, renewed *artifacts.DirStamps) {
	if cert == nil || renewed == nil || layerOff("stamps") {
		return
	}
	if !renewed.Gained(&cert.stamps) {
		return
	}
	again := &certificate{reads: cert.reads, stamps: *renewed}
	if p.putCertificate(key, again) == nil && p.Store.Unsynced() {
		p.Store.Sync() // as at the end of a pass: no marker left behind
	}
}

// lockOutputs returns every output the lock records, and false if a record
// has none.
func (p *Project) lockOutputs() ([]artifacts.Digest, bool) {
	n := 0
	for i := range p.Lock.Tasks {
		n += len(p.Lock.Tasks[i].Outputs)
	}
	outs := make([]artifacts.Digest, 0, n)
	for i := range p.Lock.Tasks {
		rec := &p.Lock.Tasks[i]
		if len(rec.Outputs) == 0 {
			return nil, false
		}
		for _, o := range rec.Outputs {
			outs = append(outs, o.Digest)
		}
	}
	return outs, true
}

// lockReport is the report of a pass that finds every task of the lock
// up to date: each task as the lock records it (its ID, kind and canonical
// parameters: what reports and the export read of a task), cached.
func (p *Project) lockReport() *Report {
	defer trace.StartRegion(context.Background(), "no-op report").End()
	n := len(p.Lock.Tasks)
	rep := &Report{Results: make([]*Result, n), Cached: n}
	tasks, results := make([]Task, n), make([]Result, n) // two allocations, not 2n
	for i := range p.Lock.Tasks {
		rec := &p.Lock.Tasks[i]
		tasks[i] = Task{ID: rec.ID, Kind: rec.Kind, Params: rec.Params, order: i}
		results[i] = Result{Task: &tasks[i], Status: Cached, Key: rec.Key, Outputs: rec.Outputs}
		rep.Results[i] = &results[i]
	}
	return rep
}

// certify writes p's certificate after a complete pass whose lock is sealed
// in the store (reads: the objects the pass read to expand its tasks).
func (p *Project) certify(r *Runner) error {
	key, ok := p.certificateKey()
	if !ok {
		return nil
	}
	reads := slices.Clone(r.reads)
	slices.SortFunc(reads, func(a, b artifacts.Digest) int { return bytes.Compare(a[:], b[:]) })
	cert := &certificate{reads: slices.Compact(reads)}
	// Its object first, so that the stamps, taken next, are of the store
	// with it. Then every output is looked for afresh (not in a listing
	// made before the stamps): what a later no-op skips looking up is what
	// this check found. If the check or the stamps fail, the certificate
	// has none, and everything is looked up.
	if _, err := p.Store.Put(cert.object()); err != nil {
		return fmt.Errorf("no-op certificate: %w", err)
	}
	if outs, ok := p.lockOutputs(); ok {
		if stamps, err := p.Store.StampDirs(); err == nil && p.Store.HasAll(outs) {
			cert.stamps = *stamps
		}
	}
	return p.putCertificate(key, cert)
}

// putCertificate writes cert under key. (Its object is written only the
// first time: Put keeps an intact copy as it is.)
func (p *Project) putCertificate(key artifacts.Key, cert *certificate) error {
	data, meta := cert.encode()
	d, err := p.Store.Put(data)
	if err != nil {
		return fmt.Errorf("no-op certificate: %w", err)
	}
	return p.Store.PutEntryLoose(artifacts.Entry{
		Key:     key,
		Kind:    noopKind,
		Outputs: []artifacts.Output{{Name: "reads", Digest: d, Size: int64(len(data))}},
		Meta:    map[string]string{"lock": p.Lock.digest.String(), "plan": p.PlanDigest, "stamps": meta["stamps"]},
	})
}

// keepCertificate adds p's certificate to what gc keeps.
func (p *Project) keepCertificate(keep map[artifacts.Digest]bool, keepKeys map[artifacts.Key]bool) {
	key, ok := p.certificateKey()
	if !ok {
		return
	}
	if e, found, err := p.Store.GetEntry(key); err == nil && found {
		keepKeys[key] = true
		for _, o := range e.Outputs {
			keep[o.Digest] = true
		}
	}
}
