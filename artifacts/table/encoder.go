package table

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/parquet-go/parquet-go"
)

// An encoder is a Parquet writer for one table layout with its output
// buffer and value scratch. Building a writer (schema, column writers and
// their 256 kB value buffers, zeroed) is a large part of encoding a run's
// trajectory or one-row summary (docs/performance.md, "Parquet codec"), so
// Encode keeps used encoders in a pool per layout and resets them
// instead. A reset writer writes the bytes a fresh one writes: Reset
// clears the row groups, column and offset indexes, statistics,
// dictionaries and page buffers (resetWriter works around its one bug);
// the settings that would leave state behind (bloom filters, encryption, a
// dictionary size limit, sorting) are not used. TestPooledEncodeIdentical
// compares against fresh writers.
type encoder struct {
	w    *parquet.Writer
	buf  bytes.Buffer
	vals []parquet.Value
}

const (
	// pooledMaxRows bounds the tables that use pooled encoders, so a pool
	// never holds the large string dictionaries or buffers of a big table;
	// building a writer is negligible next to encoding a table this large.
	pooledMaxRows = 1 << 16
	// pooledMaxLayouts bounds the number of layouts with a pool (the
	// pipeline has a few dozen); other layouts get fresh writers.
	pooledMaxLayouts = 256
)

var encoders struct {
	sync.Mutex
	pools map[string]*sync.Pool // by layoutKey
}

// layoutKey names t's column types and names, which decide its schema;
// each name is length-prefixed, so no two layouts share a key.
func layoutKey(t Table) string {
	var b strings.Builder
	for i := range t.Columns {
		c := &t.Columns[i]
		b.WriteString(c.Type())
		b.WriteByte(' ')
		b.WriteString(strconv.Itoa(len(c.Name)))
		b.WriteByte(' ')
		b.WriteString(c.Name)
	}
	return b.String()
}

// getEncoder returns a reset encoder for t's layout and the pool to return
// it to after a successful encode (nil: do not pool).
func getEncoder(t Table) (*encoder, *sync.Pool) {
	if t.NumRows() > pooledMaxRows {
		return newEncoder(t), nil
	}
	key := layoutKey(t)
	encoders.Lock()
	pool := encoders.pools[key]
	if pool == nil && len(encoders.pools) < pooledMaxLayouts {
		if encoders.pools == nil {
			encoders.pools = make(map[string]*sync.Pool)
		}
		pool = new(sync.Pool)
		encoders.pools[key] = pool
	}
	encoders.Unlock()
	if pool == nil {
		return newEncoder(t), nil
	}
	if e, ok := pool.Get().(*encoder); ok {
		e.buf.Reset()
		resetWriter(e.w, &e.buf)
		return e, pool
	}
	return newEncoder(t), pool
}

func newEncoder(t Table) *encoder {
	e := new(encoder)
	e.w = newWriter(&e.buf, newSchema(t))
	return e
}

// resetWriter readies w, closed, to write another file to out.
// parquet-go v0.32.0's Writer.Reset clears the previous file's column
// chunks with format.ColumnMetaData.Reset, which zeroes the elements of
// PathInSchema in place, and that slice's array is the column writer's own
// path, which the next file's chunks copy: every column of the next file
// would be named "" (parquet-go/parquet-go#602, open). The previous file
// is written, so its chunks can let go of the array first (through the
// footer metadata, which shares the writer's row groups).
// TestPooledEncodeIdentical fails without this.
func resetWriter(w *parquet.Writer, out io.Writer) {
	if f := w.File(); f != nil {
		md := f.Metadata()
		for i := range md.RowGroups {
			for j := range md.RowGroups[i].Columns {
				md.RowGroups[i].Columns[j].MetaData.PathInSchema = nil
			}
		}
	}
	w.Reset(out)
}
