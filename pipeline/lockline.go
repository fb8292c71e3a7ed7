package pipeline

import (
	"bytes"
	"encoding/json"

	"thv/artifacts"
)

// parseRecordLine decodes one task line of a lock in exactly the layout
// Lock.Write produces, without encoding/json (which spends most of a no-op
// pass validating and decoding 8,000 such lines). It reports false for
// anything else — an escape in a string, another field order, a non-ASCII
// byte — and the caller then decodes the line with encoding/json, so it
// only ever accepts what encoding/json would decode the same way. Params and
// Inputs are kept raw and unvalidated here: they never decide a key (keys
// are recomputed from the protocol), explain treats an undecodable value as
// changed, and NewLock validates a record before writing it again.
func parseRecordLine(line []byte, r *Record) bool {
	return (&lineParser{}).record(line, r)
}

// record parses one line; a parser may be reused for many lines.
func (p *lineParser) record(line []byte, r *Record) bool {
	p.b, p.i = line, 0
	if !p.lit(`{"id":`) || !p.str(&r.ID) || !p.lit(`,"kind":`) || !p.name(&r.Kind) ||
		!p.lit(`,"key":`) || !p.hash(r.Key.UnmarshalText) ||
		!p.lit(`,"params":`) || !p.raw(&r.Params) {
		return false
	}
	if p.lit(`,"inputs":`) && !p.raw(&r.Inputs) {
		return false
	}
	if !p.lit(`,"outputs":{`) {
		return false
	}
	// The line's outputs go to the end of the parser's slab, and the record
	// takes them as a slice of it: one allocation for many records.
	if cap(p.slab)-len(p.slab) < 8 {
		p.slab = make(Outputs, 0, 1024)
	}
	start := len(p.slab)
	for first := true; !p.lit("}"); first = false {
		var name string
		var d artifacts.Digest
		if !first && !p.lit(",") || !p.outputName(&name) || !p.lit(":") || !p.hash(d.UnmarshalText) {
			return false
		}
		// Write's order: sorted by name, each once (else encoding/json
		// decides, and sorts).
		if n := len(p.slab); n > start && p.slab[n-1].Name >= name {
			p.slab = p.slab[:start]
			return false
		}
		if len(p.slab) == cap(p.slab) { // a line with many outputs: a slab of its own
			p.slab = append(make(Outputs, 0, 2*(len(p.slab)-start)+8), p.slab[start:]...)
			start = 0
		}
		p.slab = append(p.slab, NamedDigest{name, d})
	}
	r.Outputs = p.slab[start:len(p.slab):len(p.slab)] // (empty, not nil, for "{}", as encoding/json gives)
	return p.lit("}") && p.i == len(p.b)
}

// codeMap decodes a lock's code map, {"unit":"hash",...}, as Write lays it
// out (json.Marshal of the map) without encoding/json: it holds one unit
// per declaration its tasks reach, hundreds of them, parsed on every pass.
// It reports false for anything else (a string with an escape or a byte
// that is not printable ASCII, a space), which encoding/json then decodes.
func (p *lineParser) codeMap(b []byte) (map[string]string, bool) {
	p.b, p.i = b, 0
	if !p.lit("{") {
		return nil, false
	}
	m := make(map[string]string, bytes.Count(b, []byte(`":"`)))
	for first := true; !p.lit("}"); first = false {
		var unit, hash string
		if !first && !p.lit(",") || !p.str(&unit) || !p.lit(":") || !p.str(&hash) {
			return nil, false
		}
		m[unit] = hash
	}
	return m, p.i == len(p.b)
}

type lineParser struct {
	b       []byte
	i       int
	slab    Outputs           // where records' outputs are kept
	names   map[string]string // kinds and output names, allocated once each
	outputs map[string]bool   // output names seen: true if valid (ValidName)
}

// outputName is name for an output's name, which must also be a valid
// one (ValidName, checked once per distinct name): a line with any other
// goes to encoding/json, and Lock.validate then says what is wrong with
// it. So a lock parsed in Write's layout has its output names checked.
func (p *lineParser) outputName(dst *string) bool {
	if !p.name(dst) {
		return false
	}
	valid, seen := p.outputs[*dst]
	if !seen {
		valid = ValidName(*dst) == nil
		if p.outputs == nil {
			p.outputs = map[string]bool{}
		}
		if len(p.outputs) < 64 {
			p.outputs[*dst] = valid
		}
	}
	return valid
}

// name is str for the few strings that repeat on every line.
func (p *lineParser) name(dst *string) bool {
	var b []byte
	if !p.bytes(&b) {
		return false
	}
	if s, ok := p.names[string(b)]; ok {
		*dst = s
		return true
	}
	*dst = string(b)
	if p.names == nil {
		p.names = map[string]string{}
	}
	if len(p.names) < 64 {
		p.names[*dst] = *dst
	}
	return true
}

// lit consumes s if the input continues with it.
func (p *lineParser) lit(s string) bool {
	if len(p.b)-p.i >= len(s) && string(p.b[p.i:p.i+len(s)]) == s {
		p.i += len(s)
		return true
	}
	return false
}

// str consumes a JSON string of printable ASCII without escapes.
func (p *lineParser) str(dst *string) bool {
	var b []byte
	if !p.bytes(&b) {
		return false
	}
	*dst = string(b)
	return true
}

// bytes is str without the copy: dst aliases the line.
func (p *lineParser) bytes(dst *[]byte) bool {
	if !p.lit(`"`) {
		return false
	}
	start := p.i
	for ; p.i < len(p.b); p.i++ {
		switch c := p.b[p.i]; {
		case c == '"':
			*dst = p.b[start:p.i]
			p.i++
			return true
		case c == '\\' || c < 0x20 || c >= 0x7f:
			return false
		}
	}
	return false
}

// hash consumes a JSON string holding a key or digest and decodes it with
// unmarshal. The form Lock.Write writes, "sha256:" and 64 hex digits, is
// taken at its fixed length, without scanning the string for its end:
// unmarshal accepts it only if all 71 bytes are that form (no quote,
// escape or control byte among them). Anything else takes bytes' way.
func (p *lineParser) hash(unmarshal func([]byte) error) bool {
	const n = len(`"sha256:`) + 64 + len(`"`)
	if len(p.b)-p.i >= n && p.b[p.i] == '"' && p.b[p.i+n-1] == '"' && unmarshal(p.b[p.i+1:p.i+n-1]) == nil {
		p.i += n
		return true
	}
	var b []byte
	return p.bytes(&b) && unmarshal(b) == nil
}

// raw consumes one JSON object, array or scalar (strings without escapes)
// and keeps its bytes.
func (p *lineParser) raw(dst *json.RawMessage) bool {
	start, depth := p.i, 0
	for ; p.i < len(p.b); p.i++ {
		switch c := p.b[p.i]; c {
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				*dst = json.RawMessage(p.b[start:p.i])
				return p.i > start
			}
			depth--
			if depth == 0 {
				p.i++
				*dst = json.RawMessage(p.b[start:p.i])
				return true
			}
		case ',':
			if depth == 0 {
				*dst = json.RawMessage(p.b[start:p.i])
				return p.i > start
			}
		case '"':
			// Inside a raw value only the string's end matters (its bytes
			// are kept, not interpreted): find the closing quote; an escape
			// could hide one, so a backslash sends the line to
			// encoding/json.
			end := bytes.IndexByte(p.b[p.i+1:], '"')
			if end < 0 || bytes.IndexByte(p.b[p.i+1:p.i+1+end], '\\') >= 0 {
				return false
			}
			p.i += 1 + end
		case '\\':
			return false
		}
	}
	return false
}

// validRecord reports whether a record read from disk can be written back.
func validRecord(r *Record) bool {
	return json.Valid(r.Params) && (len(r.Inputs) == 0 || json.Valid(r.Inputs))
}
