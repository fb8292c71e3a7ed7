package pipeline

import (
	"bytes"
	"context"
	"runtime/trace"
	"sync"

	"thv/artifacts"
)

// Parsing a lock takes about as long as the two checks of the no-op
// certificate that read the store (every recorded output present, every
// object the expansion read re-hashed), and neither check needs the lock
// parsed: the certificate is found by the lock's SHA-256, and the output
// digests can be picked out of its bytes. So thv repro starts them as soon
// as the lock's bytes are hashed (ReadLockEarly), on the other core, while
// the lock is parsed. The digests picked out of the bytes are checked
// against the parsed records before the result is used (NoopCheck.covers):
// the early checks are the same checks on the same objects, only sooner.
// Sooner still when every fan-out directory that holds the lock's outputs
// (the certificate names them) still has the stamp the certificate
// carries: then the outputs are all present without being named, and the
// lock's bytes are not scanned for them (Store.StampsHold).

// NoopCheck is the store-side checks of a no-op certificate, started
// before the lock is parsed (StartNoopCheck). A project uses it in its
// next pass (Project.UseNoopCheck) if it is for the same certificate and
// the same outputs; else the pass makes the checks itself.
type NoopCheck struct {
	done    chan struct{}
	scanned chan struct{}        // closed once outs and ends are final
	key     artifacts.Key        // the certificate checked
	ok      bool                 // found, every output present, every read intact
	cert    *certificate         // the certificate checked, if found
	renewed *artifacts.DirStamps // its stamps as the presence check left them (HasAllRestamp)
	stamped bool                 // every directory of the outputs held its stamp: nothing scanned

	outs []artifacts.Digest // the outputs picked out of the lock, line by line
	ends []int              // outs[ends[i-1]:ends[i]] are line i's

	unlock func() // the store's shared lock, held from the checks until the pass
	once   sync.Once
	used   bool // a pass took its result (tests)
}

// StartNoopCheck starts the checks of the no-op certificate of a protocol
// (its kinds, plan digest) for the lock whose bytes b hash to sum. It holds
// the store's shared lock (a gc must not remove what it found present)
// until the pass that uses it, or Release. It returns nil if no check can
// be made (no code fingerprint, no shared lock).
func StartNoopCheck(st *artifacts.Store, kinds *Kinds, planDigest string, b []byte, sum artifacts.Digest) *NoopCheck {
	m, ok := kinds.binaryModule()
	if !ok || planDigest == "" || layerOff("certificate") || layerOff("early") {
		return nil
	}
	unlock, err := st.LockShared()
	if err != nil {
		return nil
	}
	c := &NoopCheck{done: make(chan struct{}), scanned: make(chan struct{}), unlock: unlock}
	go func() {
		defer close(c.done)
		defer trace.StartRegion(context.Background(), "no-op checks").End()
		scanned := sync.OnceFunc(func() { close(c.scanned) })
		defer scanned()
		code, err := m.Fingerprint()
		if err != nil {
			return
		}
		c.key = noopKey(code, planDigest, sum)
		cert, ok := loadCertificate(st, c.key, sum)
		if !ok {
			return
		}
		if st.StampsHold(cert.dirs, &cert.stamps) {
			c.stamped = true
			scanned()
			c.ok = st.VerifyAll(cert.reads)
			return // (and nothing to renew)
		}
		c.outs, c.ends, ok = scanOutputs(b)
		scanned()
		if !ok {
			return
		}
		var readsOK bool
		var wg sync.WaitGroup
		wg.Go(func() {
			defer trace.StartRegion(context.Background(), "no-op checks: reads re-hashed").End()
			readsOK = st.VerifyAll(cert.reads)
		})
		region := trace.StartRegion(context.Background(), "no-op checks: outputs present")
		present, renewed := st.HasAllRestamp(c.outs, &cert.stamps)
		region.End()
		wg.Wait()
		c.ok = present && readsOK
		c.cert, c.renewed = cert, renewed
	}()
	return c
}

// wait waits for c's checks to end (nothing if c is nil).
func (c *NoopCheck) wait() {
	if c != nil {
		<-c.done
	}
}

// Release releases the store's shared lock that c holds (once; the pass
// that uses c releases it).
func (c *NoopCheck) Release() {
	if c != nil {
		c.once.Do(c.unlock)
	}
}

// result waits for c's checks and reports whether they are those of the
// certificate key for lock l, and passed. Whether they cover l's outputs
// is found while the store is still being checked (if the outputs were
// scanned: when the stamps held, the certificate under l's digest named
// the directories of l's outputs).
func (c *NoopCheck) result(key artifacts.Key, l *Lock) (checked, passed bool) {
	<-c.scanned
	covers := c.stamped || c.covers(l)
	<-c.done
	if c.key != key || !covers {
		return false, false
	}
	c.used = true
	return true, c.ok
}

// covers reports whether the outputs c checked are exactly l's: line i's
// digests are record i's outputs (in any order, each as often), and every
// record has one (as outputsPresent requires).
func (c *NoopCheck) covers(l *Lock) bool {
	if len(c.ends) != len(l.Tasks) {
		return false
	}
	start := 0
	var used [8]bool
	for i := range l.Tasks {
		line := c.outs[start:c.ends[i]]
		start = c.ends[i]
		outs := l.Tasks[i].Outputs
		if len(line) != len(outs) || len(outs) == 0 || len(line) > len(used) {
			return false
		}
		clear(used[:])
		for _, o := range outs {
			j := 0
			for j < len(line) && (used[j] || line[j] != o.Digest) {
				j++
			}
			if j == len(line) {
				return false
			}
			used[j] = true
		}
	}
	return true
}

// scanOutputs picks the output digests out of each task line of a lock in
// Lock.Write's layout (the lines parseLock splits), or reports false. It
// trusts nothing: covers checks its answer against the parsed records.
func scanOutputs(b []byte) (outs []artifacts.Digest, ends []int, ok bool) {
	_, body, ok := bytes.Cut(b, []byte(lockTasksMarker))
	if !ok || !bytes.HasSuffix(body, []byte("]}\n")) {
		return nil, nil, false
	}
	body = bytes.TrimSuffix(body, []byte("]}\n"))
	n := bytes.Count(body, []byte("\n")) + 1
	ends = make([]int, 0, n)
	outs = make([]artifacts.Digest, 0, 2*n)
	const field, prefix = `,"outputs":{`, `"sha256:`
	for len(body) > 0 {
		line, rest, _ := bytes.Cut(body, []byte("\n"))
		body = rest
		// The outputs are the line's last object: their field is found
		// from its last brace (a name with a brace falls back to a search).
		at := bytes.LastIndexByte(line, '{') - (len(field) - 1)
		if at < 0 || !bytes.HasPrefix(line[at:], []byte(field)) {
			if at = bytes.LastIndex(line, []byte(field)); at < 0 {
				return nil, nil, false
			}
		}
		for o := line[at+len(field):]; ; {
			i := bytes.Index(o, []byte(prefix))
			if i < 0 {
				break
			}
			var d artifacts.Digest
			if len(o) < i+len(prefix)+64 || d.UnmarshalText(o[i+1:i+len(prefix)+64]) != nil {
				return nil, nil, false
			}
			outs = append(outs, d)
			o = o[i+len(prefix)+64:]
		}
		ends = append(ends, len(outs))
	}
	return outs, ends, true
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
