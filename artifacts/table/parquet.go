package table

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/parquet-go/parquet-go/encoding"
)

// RowGroupRows is the number of rows per Parquet row group: tables up to
// this size are one row group. It is a row count, not a byte size, so the
// split depends on the data alone.
const RowGroupRows = 1 << 20

// CreatedBy is the created_by string of every file. parquet-go's default is
// read from the binary's build info, which differs between a test binary, a
// release build and a build with a replace directive; a constant keeps the
// bytes a function of the table alone. Change it, and with it every digest,
// when the encoding changes (e.g. a parquet-go upgrade that writes
// different bytes); TestCreatedByNamesParquetGoVersion is the reminder.
const CreatedBy = "thv-artifacts version 2 (build parquet-go v0.32.0)"

const (
	schemaName     = "schema" // the root name other writers (Arrow, pandas) use
	pageBufferSize = 256 << 10
	valueChunk     = 4096 // values converted per WriteRowValues call
)

// compression is the codec of every column: Zstandard at its fastest
// level (klauspost/compress, through parquet-go). Its encoder is integer
// code whose few assembly routines (match lengths, xxhash) compute exactly
// what their Go versions compute, so the bytes are the same on every CPU
// (docs/reproducibility.md). Snappy, the former codec, is not: klauspost's
// encoder is an assembly algorithm on amd64 and another one in Go
// elsewhere, both valid, different bytes. Gzip and Brotli decide by
// floating-point estimates that the compiler fuses differently per CPU;
// LZ4_RAW cannot be read back by parquet-go v0.32.0 (its decoder drops the
// output when it reallocates).
var compression compress.Codec = &zstd.Codec{Level: zstd.SpeedFastest}

// Encode writes t as a Parquet file, one required column per Table
// column in order: int64 as INT64, float64 as DOUBLE (both PLAIN), string as
// BYTE_ARRAY with the STRING logical type (dictionary encoded, since our
// strings are mostly repeated labels). Writer settings are fixed (see the
// package doc), so equal tables (Table.Equal) give identical bytes. Small
// tables reuse a pooled writer of their layout (encoder.go); the bytes are
// those of a fresh writer.
func Encode(t Table) ([]byte, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	e, pool := getEncoder(t)
	b, err := e.encode(t)
	if err != nil {
		return nil, err // e is dropped: a writer that failed is never reused
	}
	// The caller owns the result; e's buffer is kept for the next table.
	out := bytes.Clone(b)
	if pool != nil {
		pool.Put(e)
	}
	return out, nil
}

// newSchema is the Parquet schema of t's layout (column names and types).
func newSchema(t Table) *parquet.Schema {
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
	return parquet.NewSchema(schemaName, fields)
}

// newWriter is a writer of schema with the fixed settings.
func newWriter(out io.Writer, schema *parquet.Schema) *parquet.Writer {
	return parquet.NewWriter(out, schema, &parquet.WriterConfig{
		CreatedBy:          CreatedBy,
		Compression:        compression,
		PageBufferSize:     pageBufferSize,
		DataPageVersion:    1, // v1 pages: what Arrow C++ writes by default, read by every tool
		DataPageStatistics: true,
		MaxRowsPerRowGroup: RowGroupRows,
	})
}

// encode writes t through e.w into e.buf (both reset by the caller) and
// returns e.buf's bytes. Values go to the column writers valueChunk at a
// time: the chunking decides where pages end in large tables, so it is part
// of the format. The values carry no levels nor column index
// (Value.Level, which is not inlined, was a third of the time of a
// trajectory): a required column's writer reads only their data
// (parquet-go's column buffers gather the u64 or pointer field), so the
// bytes are the same, which TestPooledEncodeIdentical checks.
func (e *encoder) encode(t Table) ([]byte, error) {
	w := e.w
	rows := t.NumRows()
	if n := min(rows, valueChunk); cap(e.vals) < n {
		e.vals = make([]parquet.Value, n)
	}
	defer clear(e.vals) // string values point into t
	for start := 0; start < rows; start += RowGroupRows {
		end := min(rows, start+RowGroupRows)
		cws := w.ColumnWriters()
		for j := range t.Columns {
			c := &t.Columns[j]
			for lo := start; lo < end; lo += valueChunk {
				hi := min(end, lo+valueChunk)
				vals := e.vals[:hi-lo]
				switch c.Type() {
				case TypeInt64:
					for i, v := range c.Int64[lo:hi] {
						vals[i] = parquet.Int64Value(v)
					}
				case TypeFloat64:
					for i, v := range c.Float64[lo:hi] {
						if v != v {
							v = canonicalNaN
						}
						vals[i] = parquet.DoubleValue(v)
					}
				case TypeString:
					for i, v := range c.String[lo:hi] {
						vals[i] = parquet.ByteArrayValue([]byte(v))
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
	return e.buf.Bytes(), nil
}

// Decode reads a file written by Encode, or any Parquet file
// whose columns are flat and required INT64, DOUBLE or BYTE_ARRAY (read as
// strings). Anything else, or a malformed file, is an error, never a panic.
func Decode(b []byte) (t Table, err error) {
	defer func() {
		// parquet-go trusts offsets and lengths in the footer; a damaged
		// file must give an error, not crash the pipeline.
		if r := recover(); r != nil {
			t, err = Table{}, fmt.Errorf("decode parquet: malformed file: %v", r)
		}
	}()
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return Table{}, fmt.Errorf("decode parquet: %w", err)
	}
	leaves := f.Root().Columns()
	nrows := f.NumRows()
	if nrows < 0 {
		return Table{}, fmt.Errorf("decode parquet: negative row count %d", nrows)
	}
	// Preallocate, but never trust a footer for more than the file's size:
	// a damaged row count must not be able to exhaust memory.
	capHint := min(nrows, int64(len(b)))
	t.Columns = make([]Column, len(leaves))
	for i, c := range leaves {
		col := Column{Name: c.Name()}
		if !c.Leaf() {
			return Table{}, fmt.Errorf("decode parquet: column %q is nested; only flat columns are supported", c.Name())
		}
		if !c.Required() {
			return Table{}, fmt.Errorf("decode parquet: column %q is optional or repeated; only required columns are supported", c.Name())
		}
		switch kind := c.Type().Kind(); kind {
		case parquet.Int64:
			col.Int64 = make([]int64, 0, capHint)
		case parquet.Double:
			col.Float64 = make([]float64, 0, capHint)
		case parquet.ByteArray:
			col.String = make([]string, 0, capHint)
		default:
			return Table{}, fmt.Errorf("decode parquet: column %q has type %v; only INT64, DOUBLE and BYTE_ARRAY are supported", c.Name(), c.Type())
		}
		t.Columns[i] = col
	}
	vals := make([]parquet.Value, valueChunk)
	for g, rg := range f.RowGroups() {
		chunks := rg.ColumnChunks()
		if len(chunks) != len(t.Columns) {
			return Table{}, fmt.Errorf("decode parquet: row group %d has %d columns, schema has %d", g, len(chunks), len(t.Columns))
		}
		for j, chunk := range chunks {
			if err := readChunk(chunk, &t.Columns[j], vals); err != nil {
				return Table{}, fmt.Errorf("decode parquet: row group %d column %q: %w", g, t.Columns[j].Name, err)
			}
		}
	}
	for i := range t.Columns {
		if n := t.Columns[i].Len(); int64(n) != nrows {
			return Table{}, fmt.Errorf("decode parquet: column %q has %d values, file says %d rows", t.Columns[i].Name, n, nrows)
		}
	}
	if err := t.Validate(); err != nil {
		return Table{}, fmt.Errorf("decode parquet: %w", err)
	}
	return t, nil
}

func readChunk(chunk parquet.ColumnChunk, c *Column, vals []parquet.Value) error {
	pages := chunk.Pages()
	defer pages.Close()
	for {
		p, err := pages.ReadPage()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		err = readPage(p, c, vals)
		parquet.Release(p)
		if err != nil {
			return err
		}
	}
}

func readPage(p parquet.Page, c *Column, vals []parquet.Value) error {
	r := p.Values()
	for {
		n, err := r.ReadValues(vals)
		for _, v := range vals[:n] {
			if v.IsNull() {
				return errors.New("null value in a required column")
			}
			switch {
			case c.Int64 != nil:
				c.Int64 = append(c.Int64, v.Int64())
			case c.Float64 != nil:
				c.Float64 = append(c.Float64, v.Double())
			default:
				c.String = append(c.String, string(v.ByteArray()))
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// orderedGroup is a parquet group node whose fields keep the order given.
// parquet.Group is a map and sorts its fields by name, which would reorder
// the columns of every table.
type orderedGroup []parquet.Field

func (g orderedGroup) ID() int                     { return 0 }
func (g orderedGroup) Type() parquet.Type          { return parquet.Group{}.Type() }
func (g orderedGroup) Optional() bool              { return false }
func (g orderedGroup) Repeated() bool              { return false }
func (g orderedGroup) Required() bool              { return true }
func (g orderedGroup) Leaf() bool                  { return false }
func (g orderedGroup) Fields() []parquet.Field     { return g }
func (g orderedGroup) Encoding() encoding.Encoding { return nil }
func (g orderedGroup) Compression() compress.Codec { return nil }

func (g orderedGroup) String() string {
	var b strings.Builder
	b.WriteString("group {")
	for _, f := range g {
		fmt.Fprintf(&b, " required %v %s;", f.Type(), f.Name())
	}
	b.WriteString(" }")
	return b.String()
}

// GoType returns a struct with one field per column, in order, for
// parquet-go code paths that want a Go type (we never write through them).
func (g orderedGroup) GoType() reflect.Type {
	fields := make([]reflect.StructField, len(g))
	for i, f := range g {
		fields[i] = reflect.StructField{
			Name: fmt.Sprintf("F%d", i),
			Type: f.GoType(),
			Tag:  reflect.StructTag(fmt.Sprintf(`parquet:%q`, f.Name())),
		}
	}
	return reflect.StructOf(fields)
}

// orderedField is one column of an orderedGroup.
type orderedField struct {
	parquet.Node
	name  string
	index int
}

func (f *orderedField) Name() string                           { return f.name }
func (f *orderedField) Value(base reflect.Value) reflect.Value { return base.Field(f.index) }
