package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"thv/artifacts"
)

// TestParseRecordLineAgreesWithJSON: every line the fast parser accepts
// decodes to what encoding/json gives, and lines in other layouts are left
// to encoding/json.
func TestParseRecordLineAgreesWithJSON(t *testing.T) {
	d := artifacts.Sum([]byte("x"))
	k := artifacts.Key(artifacts.Sum([]byte("k")))
	recs := []Record{
		{ID: "run/d2/concave/ParetoUCB+/eta=0.1/seed=0", Kind: "run", Key: k, Params: json.RawMessage(`{"a":[1,2,{"b":"c,}"}],"e":-1.5e-7,"f":true}`), Outputs: OutputsOf(map[string]artifacts.Digest{"summary": d, "trajectory": d})},
		{ID: "tables", Kind: "tables", Key: k, Params: json.RawMessage(`"plain"`), Inputs: json.RawMessage(`{"cells/d2":"` + d.String() + `"}`), Outputs: OutputsOf(map[string]artifacts.Digest{"a.tex": d})},
		{ID: "x", Kind: "gen", Key: k, Params: json.RawMessage(`7`), Outputs: OutputsOf(map[string]artifacts.Digest{"x": d})},
		{ID: "a<b&c", Kind: "gen", Key: k, Params: json.RawMessage(`null`), Outputs: OutputsOf(map[string]artifacts.Digest{"x": d})},
	}
	fast := 0
	for _, r := range recs {
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var want, got Record
		if err := json.Unmarshal(line, &want); err != nil {
			t.Fatal(err)
		}
		if parseRecordLine(line, &got) {
			fast++
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s:\nfast %+v\njson %+v", line, got, want)
			}
		} else if !strings.Contains(string(line), `\u`) {
			t.Errorf("fast parser refused a line in Write's layout: %s", line)
		}
	}
	if fast != 3 {
		t.Fatalf("fast parser accepted %d lines, want 3 (the escaped ID goes to encoding/json)", fast)
	}
	line, _ := json.Marshal(recs[0])
	for _, bad := range []string{
		strings.Replace(string(line), `"kind"`, `"knd"`, 1),
		strings.Replace(string(line), `sha256:`, `sha512:`, 1),
		string(line) + " ",
		string(line[:len(line)-1]),
		strings.Replace(string(line), `"outputs":{`, `"outputs":{"summary":"sha256:00",`, 1),
		strings.Replace(string(line), `,"trajectory"`, `,"summary"`, 1),
		`{"id":"a\"b","kind":"k"}`,
	} {
		var r Record
		if parseRecordLine([]byte(bad), &r) {
			t.Errorf("fast parser accepted %s", bad)
		}
	}
}

func FuzzParseRecordLine(f *testing.F) {
	line, _ := json.Marshal(Record{ID: "a", Kind: "k", Params: json.RawMessage(`{"x":[1]}`), Outputs: OutputsOf(map[string]artifacts.Digest{"o": artifacts.Sum(nil)})})
	f.Add(line)
	f.Fuzz(func(t *testing.T, b []byte) {
		var fast, slow Record
		if !parseRecordLine(b, &fast) {
			return
		}
		if err := json.Unmarshal(b, &slow); err != nil {
			if json.Valid(b) {
				t.Fatalf("fast parser accepted %q, encoding/json: %v", b, err)
			}
			return // raw params are unvalidated by design
		}
		if fast.ID != slow.ID || fast.Kind != slow.Kind || fast.Key != slow.Key || !reflect.DeepEqual(fast.Outputs, slow.Outputs) {
			t.Fatalf("%q: fast %+v, json %+v", b, fast, slow)
		}
	})
}

// FuzzReadLock: any bytes either fail to read with an error or give a
// lock whose output names are safe file names and that writes back to a
// file which reads back to the same records.
func FuzzReadLock(f *testing.F) {
	d := artifacts.Sum([]byte("x"))
	l := &Lock{Version: lockVersion, Profile: "p", Code: map[string]string{"thv/hv": "abc"}, Tasks: []Record{
		{ID: "a", Kind: "gen", Key: artifacts.Key(d), Params: json.RawMessage(`{"n":1}`), Outputs: OutputsOf(map[string]artifacts.Digest{"x": d})},
		{ID: "b", Kind: "sum", Key: artifacts.Key(d), Params: json.RawMessage(`[1,"s"]`), Inputs: json.RawMessage(`{"a":"` + d.String() + `"}`), Outputs: OutputsOf(map[string]artifacts.Digest{"y.tex": d})},
	}}
	dir := f.TempDir()
	path := filepath.Join(dir, "seed.lock")
	if err := l.Write(path); err != nil {
		f.Fatal(err)
	}
	seed, _ := os.ReadFile(path)
	f.Add(seed)
	f.Add([]byte(`{"version": 2, "tasks": []}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := decodeLock(b)
		if err != nil {
			return
		}
		var whole struct{ Code map[string]string }
		if json.Unmarshal(b, &whole) == nil && !maps.Equal(whole.Code, l.Code) && len(whole.Code)+len(l.Code) > 0 {
			t.Fatalf("code map %v, encoding/json reads %v", l.Code, whole.Code)
		}
		for _, r := range l.Tasks {
			for _, o := range r.Outputs {
				if ValidName(o.Name) != nil {
					t.Fatalf("accepted output name %q", o.Name)
				}
			}
		}
		for i := range l.Tasks {
			if !validRecord(&l.Tasks[i]) {
				return // NewLock drops such records; Write is never asked to
			}
		}
		out, err := l.encode()
		if err != nil {
			t.Fatalf("an accepted lock does not encode: %v", err)
		}
		again, err := decodeLock(out)
		if err != nil {
			t.Fatalf("a written lock does not read back: %v", err)
		}
		if len(again.Tasks) != len(l.Tasks) {
			t.Fatalf("%d records, then %d", len(l.Tasks), len(again.Tasks))
		}
		for i := range l.Tasks {
			a, b := l.Tasks[i], again.Tasks[i]
			if a.ID != b.ID || a.Key != b.Key || !reflect.DeepEqual(a.Outputs, b.Outputs) {
				t.Fatalf("record %d: %+v, then %+v", i, a, b)
			}
		}
	})
}

// TestLockTaskIDs: a lock whose task IDs repeat, or one of which is
// empty, is refused with the line of the first, whether it is read line
// by line or as one JSON document; a valid one finds every record by ID.
func TestLockTaskIDs(t *testing.T) {
	d := artifacts.Sum([]byte("x"))
	rec := func(id string) Record {
		return Record{ID: id, Kind: "gen", Key: artifacts.Key(d), Params: json.RawMessage(`{}`), Outputs: OutputsOf(map[string]artifacts.Digest{"x": d})}
	}
	var ids []string
	for i := range 500 {
		ids = append(ids, fmt.Sprintf("gen/%d", i))
	}
	encode := func(ids ...string) []byte {
		l := &Lock{Version: lockVersion, Profile: "p", Code: map[string]string{}}
		for _, id := range ids {
			l.Tasks = append(l.Tasks, rec(id))
		}
		b, err := l.encode()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	b := encode(ids...)
	l, err := decodeLock(b)
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		if r, ok := l.Record(id); !ok || r != &l.Tasks[i] {
			t.Fatalf("Record(%q) = %v, %v", id, r, ok)
		}
	}
	if _, ok := l.Record("gen/500"); ok {
		t.Fatal("Record found an ID the lock does not hold")
	}
	for name, tc := range map[string]struct {
		ids  []string
		line string
	}{
		"repeated":       {append(slices.Clone(ids[:300]), ids[7]), `task line 301: empty or repeated task ID "gen/7"`},
		"repeated twice": {append(append(slices.Clone(ids[:10]), ids[3]), ids[4]), `task line 11: empty or repeated task ID "gen/3"`},
		"empty":          {append(slices.Clone(ids[:20]), ""), `task line 21: empty or repeated task ID ""`},
	} {
		b := encode(tc.ids...)
		one := bytes.ReplaceAll(b, []byte("\n"), []byte(" ")) // not Write's layout: one JSON document
		for layout, b := range map[string][]byte{"lines": b, "document": one} {
			if _, err := decodeLock(b); err == nil || !strings.Contains(err.Error(), tc.line) {
				t.Errorf("%s, %s: %v, want %q", name, layout, err, tc.line)
			}
		}
	}
}

// TestReadHashed: the bytes read are the file's and the sum is theirs,
// for sizes around the chunk size, and for a file whose size stat(2)
// does not tell (/proc: read until EOF, the buffer grown as it goes).
func TestReadHashed(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 1, readChunk - 1, readChunk, readChunk + 1, 3*readChunk + 5} {
		want := make([]byte, n)
		for i := range want {
			want[i] = byte(i*7 + i>>9)
		}
		path := filepath.Join(dir, fmt.Sprint(n))
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		b, sum, err := readHashed(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, want) || <-sum != artifacts.Sum(want) {
			t.Fatalf("%d bytes: read %d, or the sum is not theirs", n, len(b))
		}
	}
	if _, err := os.Stat("/proc/self/status"); err == nil {
		b, sum, err := readHashed("/proc/self/status")
		if err != nil || len(b) == 0 || <-sum != artifacts.Sum(b) {
			t.Fatalf("/proc/self/status: %d bytes, %v", len(b), err)
		}
	}
	if _, _, err := readHashed(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a missing file: %v", err)
	}
	if _, _, err := readHashed(dir); err == nil {
		t.Fatal("a directory read as a lock")
	}
}

// TestLineParserSlab: one parser over many lines keeps each record's
// outputs in its slab, a line with more outputs than a slab has room left
// (or than a slab holds) included, and no later line overwrites an earlier
// record's outputs.
func TestLineParserSlab(t *testing.T) {
	var p lineParser
	var want, got []Record
	for i := range 700 {
		m := map[string]artifacts.Digest{}
		for j := range 1 + i%23 + i/690*2000 { // up to 23 outputs; the last lines 2,000 and more
			m[fmt.Sprintf("o%04d", j)] = artifacts.Sum(fmt.Appendf(nil, "%d/%d", i, j))
		}
		line, err := json.Marshal(Record{ID: fmt.Sprint(i), Kind: "k", Params: json.RawMessage(`1`), Outputs: OutputsOf(m)})
		if err != nil {
			t.Fatal(err)
		}
		var w, g Record
		if err := json.Unmarshal(line, &w); err != nil {
			t.Fatal(err)
		}
		if !p.record(line, &g) {
			t.Fatalf("line %d: not parsed", i)
		}
		want, got = append(want, w), append(got, g)
	}
	for i := range want {
		if !got[i].Outputs.Equal(want[i].Outputs) {
			t.Fatalf("record %d: %d outputs, want %d (or other digests)", i, len(got[i].Outputs), len(want[i].Outputs))
		}
	}
}

// TestCodeMap: the code map Write lays out is read without encoding/json,
// to the same map; anything else is left to encoding/json, which reads
// the same.
func TestCodeMap(t *testing.T) {
	code := map[string]string{"go": "go1.26.8", "thv/algos.Crowding": "ab12", "thv/algos.(init order)": "cd34", "m@v1": "h1:x+y/z="}
	b, _ := json.Marshal(code)
	if got, ok := (&lineParser{}).codeMap(b); !ok || !maps.Equal(got, code) {
		t.Fatalf("codeMap(%s) = %v, %v", b, got, ok)
	}
	for _, bad := range []string{`{"a":"b" }`, `{"a\u00e9":"b"}`, `{"a":"b",}`, `{"a":1}`, `{"é":"b"}`, `{"a":"b"}x`, ``} {
		if _, ok := (&lineParser{}).codeMap([]byte(bad)); ok {
			t.Errorf("codeMap accepted %q", bad)
		}
	}
	for _, head := range []string{
		"{\"version\": 2,\n\"profile\": \"p\",\n\"code\": " + string(b) + ",\n",
		"{\"version\": 2,\n\"profile\": \"p\",\n\"code\": {\"caf\\u00e9\":\"x\"},\n",
		"{\"version\": 2,\n\"CODE\": {\"a\":\"1\"},\n\"code\": {\"b\":\"2\"},\n",
	} {
		l, err := parseLock([]byte(head + lockTasksMarker + "]}\n"))
		var want struct{ Code map[string]string }
		json.Unmarshal([]byte(head+"\"tasks\": []}"), &want)
		if err != nil || !maps.Equal(l.Code, want.Code) {
			t.Errorf("%q: code %v (%v), encoding/json reads %v", head, l.Code, err, want.Code)
		}
	}
}
