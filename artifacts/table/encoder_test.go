package table

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// encodeFresh is Encode as it was before encoders were pooled (a fresh
// writer per table, values with levels and column index): the oracle of
// TestPooledEncodeIdentical.
func encodeFresh(t Table) ([]byte, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	fields := make(orderedGroup, len(t.Columns))
	for i := range t.Columns {
		c := &t.Columns[i]
		var n parquet.Node
		switch c.Type() {
		case TypeInt64:
			n = parquet.Encoded(parquet.Leaf(parquet.Int64Type), &parquet.Plain)
		case TypeFloat64:
			n = parquet.Encoded(parquet.Leaf(parquet.DoubleType), &parquet.Plain)
		case TypeString:
			n = parquet.Encoded(parquet.String(), &parquet.RLEDictionary)
		}
		fields[i] = &orderedField{Node: parquet.Compressed(n, compression), name: c.Name, index: i}
	}
	schema := parquet.NewSchema(schemaName, fields)

	var buf bytes.Buffer
	w := parquet.NewWriter(&buf, schema, &parquet.WriterConfig{
		CreatedBy:          CreatedBy,
		Compression:        compression,
		PageBufferSize:     pageBufferSize,
		DataPageVersion:    1,
		DataPageStatistics: true,
		MaxRowsPerRowGroup: RowGroupRows,
	})
	rows := t.NumRows()
	vals := make([]parquet.Value, 0, valueChunk)
	for start := 0; start < rows; start += RowGroupRows {
		end := min(rows, start+RowGroupRows)
		cws := w.ColumnWriters()
		for j := range t.Columns {
			c := &t.Columns[j]
			for lo := start; lo < end; lo += valueChunk {
				hi := min(end, lo+valueChunk)
				vals = vals[:0]
				switch c.Type() {
				case TypeInt64:
					for _, v := range c.Int64[lo:hi] {
						vals = append(vals, parquet.Int64Value(v).Level(0, 0, j))
					}
				case TypeFloat64:
					for _, v := range c.Float64[lo:hi] {
						if v != v {
							v = canonicalNaN
						}
						vals = append(vals, parquet.DoubleValue(v).Level(0, 0, j))
					}
				case TypeString:
					for _, v := range c.String[lo:hi] {
						vals = append(vals, parquet.ByteArrayValue([]byte(v)).Level(0, 0, j))
					}
				}
				if _, err := cws[j].WriteRowValues(vals); err != nil {
					return nil, fmt.Errorf("encode parquet: column %q: %w", c.Name, err)
				}
			}
		}
		if end < rows {
			if err := w.Flush(); err != nil {
				return nil, fmt.Errorf("encode parquet: %w", err)
			}
		}
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("encode parquet: %w", err)
	}
	return buf.Bytes(), nil
}

// Row counts around the boundaries that decide the bytes: a value chunk
// (4096), an int64/double page (8 chunks, 32768 values of 8 bytes fill
// the 256 kB page buffer), a dictionary index page (16 chunks of 4-byte
// indexes), and pooledMaxRows (tables above it take fresh writers).
var boundaryRows = []int{
	0, 1, 2, 3, 17, 100, 2000, 3000, 5000,
	valueChunk - 1, valueChunk, valueChunk + 1,
	8*valueChunk - 1, 8 * valueChunk, 8*valueChunk + 1,
	16*valueChunk - 1, 16 * valueChunk, 16*valueChunk + 1,
	pooledMaxRows + 1,
}

// randomLayout is the types and names of a table's columns: few names and
// types, so that layouts repeat and tables of one layout follow tables of
// another.
type layout struct {
	types []string
	names []string
}

func randomLayout(r *rand.Rand) layout {
	names := []string{"round", "hv", "algo", "eta", "seed", "x", "ü-ñ ✓"}
	r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	n := 1 + r.IntN(4)
	l := layout{names: names[:n]}
	for range n {
		l.types = append(l.types, []string{TypeInt64, TypeFloat64, TypeString}[r.IntN(3)])
	}
	return l
}

// randomTable fills a table of layout l with rows rows of awkward values:
// extreme integers, NaNs of several payloads, ±0, ±Inf, subnormals, empty
// and non-ASCII strings, few or many distinct strings.
func randomTable(r *rand.Rand, l layout, rows int) Table {
	t := Table{Columns: make([]Column, len(l.types))}
	distinct := 1 + r.IntN(50)
	if r.IntN(4) == 0 {
		distinct = rows + 1 // mostly unique strings: a large dictionary
	}
	for c, typ := range l.types {
		switch typ {
		case TypeInt64:
			v := make([]int64, rows)
			for i := range v {
				switch r.IntN(8) {
				case 0:
					v[i] = math.MinInt64
				case 1:
					v[i] = math.MaxInt64
				default:
					v[i] = r.Int64N(1<<40) - 1<<39
				}
			}
			t.Columns[c] = Int64Column(l.names[c], v)
		case TypeFloat64:
			v := make([]float64, rows)
			for i := range v {
				switch r.IntN(12) {
				case 0:
					v[i] = math.NaN()
				case 1:
					v[i] = math.Float64frombits(0x7ff0000000000000 | r.Uint64N(1<<52-1) + 1) // NaN, another payload
				case 2:
					v[i] = math.Float64frombits(0xfff8000000000001) // negative NaN
				case 3:
					v[i] = math.Copysign(0, -1)
				case 4:
					v[i] = math.Inf(1 - 2*r.IntN(2))
				case 5:
					v[i] = math.SmallestNonzeroFloat64 * float64(r.IntN(9))
				default:
					v[i] = r.NormFloat64() * 1e3
				}
			}
			t.Columns[c] = Float64Column(l.names[c], v)
		case TypeString:
			v := make([]string, rows)
			for i := range v {
				switch k := r.IntN(distinct); k {
				case 0:
					v[i] = ""
				case 1:
					v[i] = "ü-ñ ✓"
				default:
					v[i] = fmt.Sprintf("label-%d", k)
				}
			}
			t.Columns[c] = StringColumn(l.names[c], v)
		}
	}
	return t
}

// checkSame encodes t through Encode and through the oracle and reports a
// difference.
func checkSame(t Table) error {
	got, err := Encode(t)
	if err != nil {
		return err
	}
	want, err := encodeFresh(t)
	if err != nil {
		return err
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("%d rows, layout %q: Encode wrote %d bytes that differ from a fresh writer's %d", t.NumRows(), layoutKey(t), len(got), len(want))
	}
	return nil
}

// TestPooledEncodeIdentical requires Encode, with its pooled and reset
// writers, to write the bytes of a fresh writer, for tables of every
// column type at sizes around the page and chunk boundaries, layouts
// interleaved, from several goroutines at once.
func TestPooledEncodeIdentical(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 1))
	layouts := make([]layout, 6)
	for i := range layouts {
		layouts[i] = randomLayout(r)
	}
	// The pipeline's two run outputs, and a table with every type.
	fixed := []Table{trajectoryTable(3000), summaryTable(), trajectoryTable(5000), specialTable(), summaryTable()}
	for _, tb := range fixed {
		if err := checkSame(tb); err != nil {
			t.Error(err)
		}
	}
	// Sequential: every boundary size in every layout, layouts interleaved
	// and each size visited twice (the second time on a used writer).
	for pass := range 2 {
		for _, rows := range boundaryRows {
			for _, l := range layouts {
				if rows > 8*valueChunk+1 && r.IntN(3) != 0 {
					continue // the large sizes in a third of the layouts keep the test short
				}
				if err := checkSame(randomTable(r, l, rows)); err != nil {
					t.Errorf("pass %d: %v", pass, err)
				}
			}
		}
	}
	// Concurrent: four goroutines draw small and medium tables of the same
	// layouts, so writers pass between goroutines through the pools.
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(21, uint64(100+g)))
			for range 150 {
				rows := []int{0, 1, 2, 3000, r.IntN(2 * valueChunk)}[r.IntN(5)]
				if err := checkSame(randomTable(r, layouts[r.IntN(len(layouts))], rows)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent: %v", err)
	}
}

// TestPooledEncodeCoversPagesAndRowGroups makes sure the boundary sizes of
// TestPooledEncodeIdentical reach more than one page and, for the
// unpooled path, more than one row group, so the comparison covers them.
func TestPooledEncodeCoversPagesAndRowGroups(t *testing.T) {
	pages := func(b []byte) []int {
		f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		var n []int
		for _, rg := range f.RowGroups() {
			for _, c := range rg.ColumnChunks() {
				oi, err := c.OffsetIndex()
				if err != nil {
					t.Fatal(err)
				}
				n = append(n, oi.NumPages())
			}
		}
		return n
	}
	r := rand.New(rand.NewPCG(21, 2))
	l := layout{types: []string{TypeInt64, TypeFloat64, TypeString}, names: []string{"i", "f", "s"}}
	b, err := Encode(randomTable(r, l, 16*valueChunk+1))
	if err != nil {
		t.Fatal(err)
	}
	if got := pages(b); got[0] < 3 || got[1] < 3 || got[2] < 2 {
		t.Errorf("pages per column at %d rows = %v, want ≥ 3, 3, 2", 16*valueChunk+1, got)
	}
	big := randomTable(r, layout{types: []string{TypeInt64, TypeFloat64}, names: []string{"i", "f"}}, RowGroupRows+3)
	if err := checkSame(big); err != nil {
		t.Error(err)
	}
	b, err = Encode(big)
	if err != nil {
		t.Fatal(err)
	}
	if got := pages(b); len(got) != 4 {
		t.Errorf("%d column chunks, want 2 row groups of 2", len(got))
	}
}
