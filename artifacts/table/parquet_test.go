package table

import (
	"bytes"
	"context"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	arrowpq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/parquet-go/parquet-go"
)

var negZero = math.Copysign(0, -1)

// specialTable has every awkward float and a column order that is not
// alphabetical.
func specialTable() Table {
	return Table{Columns: []Column{
		StringColumn("algo", []string{"THV-UCB", "ParetoUCB", "THV-UCB", "", "ü-ñ ✓", "THV-UCB"}),
		Int64Column("seed", []int64{0, -1, math.MaxInt64, math.MinInt64, 42, 7}),
		Float64Column("hv", []float64{math.NaN(), math.Inf(1), math.Inf(-1), negZero, 0, 0.1 + 0.2}),
		Float64Column("a_regret", []float64{1e-310, -1e308, math.SmallestNonzeroFloat64, math.MaxFloat64, 3, -2.5}),
	}}
}

func TestParquetRoundTrip(t *testing.T) {
	in := specialTable()
	b, err := Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("PAR1")) || !bytes.HasSuffix(b, []byte("PAR1")) {
		t.Fatal("not a Parquet file")
	}
	out, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Names(), []string{"algo", "seed", "hv", "a_regret"}) {
		t.Fatalf("column order = %v", out.Names())
	}
	if !out.Equal(in) {
		t.Fatalf("round trip differs:\n in %+v\nout %+v", in, out)
	}
	hv, _ := out.Float64s("hv")
	// Checked bit by bit, not through Equal, so that a wrong Equal cannot hide a wrong round trip.
	if !math.IsNaN(hv[0]) || math.Float64bits(hv[0]) != math.Float64bits(math.NaN()) {
		t.Errorf("NaN came back as %x", math.Float64bits(hv[0]))
	}
	if !math.IsInf(hv[1], 1) || !math.IsInf(hv[2], -1) {
		t.Errorf("infinities came back as %v %v", hv[1], hv[2])
	}
	if math.Float64bits(hv[3]) != math.Float64bits(negZero) || math.Float64bits(hv[4]) != 0 {
		t.Errorf("-0/+0 came back as %x %x", math.Float64bits(hv[3]), math.Float64bits(hv[4]))
	}
	if hv[5] != 0.1+0.2 {
		t.Errorf("0.1+0.2 came back as %v", hv[5])
	}
	seeds, _ := out.Int64s("seed")
	if !slices.Equal(seeds, in.Columns[1].Int64) {
		t.Errorf("seed = %v", seeds)
	}
	algos, _ := out.Strings("algo")
	if !slices.Equal(algos, in.Columns[0].String) {
		t.Errorf("algo = %q", algos)
	}
	reg, _ := out.Float64s("a_regret")
	for i, v := range in.Columns[3].Float64 {
		if math.Float64bits(reg[i]) != math.Float64bits(v) {
			t.Errorf("a_regret[%d] = %v, want %v", i, reg[i], v)
		}
	}
	for _, c := range out.Columns {
		if c.Type() == "" {
			t.Errorf("decoded column %q has more or less than one slice", c.Name)
		}
	}
}

func TestParquetDeterministic(t *testing.T) {
	a, err := Encode(specialTable())
	if err != nil {
		t.Fatal(err)
	}
	b, err := Encode(specialTable()) // new slices, same values
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatal("the same table encoded twice gives different bytes")
	}

	// Another NaN payload (0/0 on amd64 gives the sign bit set) is the same value.
	other := specialTable()
	other.Columns[2].Float64[0] = math.Float64frombits(0xfff8000000000000)
	if !math.IsNaN(other.Columns[2].Float64[0]) {
		t.Fatal("test setup: not a NaN")
	}
	c, _ := Encode(other)
	if !bytes.Equal(a, c) {
		t.Error("NaN payload changes the bytes")
	}

	// But -0 and +0 are different tables, and so is any value change.
	other = specialTable()
	other.Columns[2].Float64[3] = 0
	if d, _ := Encode(other); bytes.Equal(a, d) {
		t.Error("-0 and +0 encode the same")
	}
	other = specialTable()
	other.Columns[1].Int64[4]++
	if d, _ := Encode(other); bytes.Equal(a, d) {
		t.Error("changing a value does not change the bytes")
	}

	// Bytes do not depend on the wall clock or on earlier encodings.
	big := largeTable(50000)
	e1, _ := Encode(big)
	Encode(specialTable())
	e2, _ := Encode(largeTable(50000))
	if !bytes.Equal(e1, e2) {
		t.Error("a larger table encodes differently twice")
	}
}

func largeTable(n int) Table {
	arm := make([]int64, n)
	mu := make([]float64, n)
	lab := make([]string, n)
	for i := range n {
		arm[i] = int64(i % 97)
		mu[i] = math.Sin(float64(i))
		lab[i] = []string{"linear", "convex", "concave", "clusters"}[i%4]
	}
	return Table{Columns: []Column{Int64Column("arm", arm), Float64Column("mu", mu), StringColumn("geometry", lab)}}
}

func TestParquetFooter(t *testing.T) {
	b, err := Encode(specialTable())
	if err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	md := f.Metadata()
	if md.CreatedBy != CreatedBy {
		t.Errorf("created_by = %q, want %q", md.CreatedBy, CreatedBy)
	}
	if len(md.KeyValueMetadata) != 0 {
		t.Errorf("key/value metadata written: %v", md.KeyValueMetadata)
	}
	if len(md.RowGroups) != 1 {
		t.Errorf("%d row groups, want 1", len(md.RowGroups))
	}
}

// TestCreatedByNamesParquetGoVersion fails when parquet-go is upgraded
// without revisiting CreatedBy (and the determinism of the new version).
// Test binaries carry no dependency build info, so it reads go.mod.
func TestCreatedByNamesParquetGoVersion(t *testing.T) {
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Skip("no go.mod:", err)
	}
	for line := range strings.Lines(string(mod)) {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "github.com/parquet-go/parquet-go" {
			if !strings.Contains(CreatedBy, "parquet-go "+f[1]+")") {
				t.Errorf("CreatedBy = %q does not name parquet-go %s, the version in go.mod", CreatedBy, f[1])
			}
			return
		}
	}
	t.Error("go.mod does not require github.com/parquet-go/parquet-go")
}

func TestParquetManyRowGroups(t *testing.T) {
	if testing.Short() {
		t.Skip("encodes a million rows")
	}
	n := RowGroupRows + 1000
	v := make([]int64, n)
	for i := range v {
		v[i] = int64(i) * 3
	}
	in := Table{Columns: []Column{Int64Column("i", v)}}
	b, err := Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if got := len(f.RowGroups()); got != 2 {
		t.Errorf("%d row groups, want 2", got)
	}
	out, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Equal(in) {
		t.Error("round trip across row groups differs")
	}
}

func TestParquetEmptyTable(t *testing.T) {
	in := Table{Columns: []Column{Int64Column("arm", nil), Float64Column("mu", nil), StringColumn("s", nil)}}
	b, err := Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Equal(in) || out.NumRows() != 0 {
		t.Errorf("empty table came back as %+v", out)
	}
	tbl := readWithArrow(t, b)
	defer tbl.Release()
	if tbl.NumRows() != 0 || tbl.NumCols() != 3 {
		t.Errorf("arrow sees %d rows, %d cols", tbl.NumRows(), tbl.NumCols())
	}
}

func TestDecodeRejectsDamage(t *testing.T) {
	good, err := Encode(largeTable(2000))
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]byte{
		"empty":     nil,
		"garbage":   []byte("this is not parquet at all, not even close"),
		"truncated": good[:len(good)/2],
		"no footer": good[:len(good)-8],
	}
	for name, b := range cases {
		if _, err := Decode(b); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// Flipping bytes must give an error or a (possibly different) table, never a panic.
	for i := 4; i < len(good)-4; i += 37 {
		b := slices.Clone(good)
		b[i] ^= 0x5a
		Decode(b)
	}
}

// readWithArrow reads b with Apache Arrow's Parquet reader, an implementation
// independent of the writer.
func readWithArrow(t *testing.T, b []byte) arrow.Table {
	t.Helper()
	rdr, err := file.NewParquetReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("arrow: %v", err)
	}
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatalf("arrow: %v", err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatalf("arrow: %v", err)
	}
	return tbl
}

func TestArrowReadsOurParquet(t *testing.T) {
	// A table shaped like an instance: {arm, front, mu_1..mu_3}.
	in := Table{Columns: []Column{
		Int64Column("arm", []int64{0, 1, 2, 3}),
		Int64Column("front", []int64{1, 0, 1, 0}),
		Float64Column("mu_1", []float64{0.9, 0.1, math.NaN(), negZero}),
		Float64Column("mu_2", []float64{0.2, 0.15, math.Inf(1), 0.5}),
		Float64Column("mu_3", []float64{0.4, 0.05, 0.3, math.Inf(-1)}),
		StringColumn("geometry", []string{"concave", "concave", "convex", "linear"}),
	}}
	b, err := Encode(in)
	if err != nil {
		t.Fatal(err)
	}

	// Physical schema, as Arrow's low-level reader sees it.
	rdr, err := file.NewParquetReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	md := rdr.MetaData()
	wantPhys := []arrowpq.Type{arrowpq.Types.Int64, arrowpq.Types.Int64, arrowpq.Types.Double, arrowpq.Types.Double, arrowpq.Types.Double, arrowpq.Types.ByteArray}
	if n := md.Schema.NumColumns(); n != len(wantPhys) {
		t.Fatalf("arrow sees %d columns, want %d", n, len(wantPhys))
	}
	for i, want := range wantPhys {
		c := md.Schema.Column(i)
		if c.Name() != in.Columns[i].Name || c.PhysicalType() != want {
			t.Errorf("column %d: arrow sees %s %v, want %s %v", i, c.Name(), c.PhysicalType(), in.Columns[i].Name, want)
		}
		if c.MaxDefinitionLevel() != 0 {
			t.Errorf("column %s is not required", c.Name())
		}
	}
	if !md.Schema.Column(5).LogicalType().Equals(schema.StringLogicalType{}) {
		t.Errorf("geometry logical type = %v, want String", md.Schema.Column(5).LogicalType())
	}
	if md.GetCreatedBy() != CreatedBy || md.NumRowGroups() != 1 || md.GetNumRows() != 4 {
		t.Errorf("arrow metadata: created_by %q, %d row groups, %d rows", md.GetCreatedBy(), md.NumRowGroups(), md.GetNumRows())
	}
	rdr.Close()

	// Values, through Arrow's Parquet → Arrow conversion.
	tbl := readWithArrow(t, b)
	defer tbl.Release()
	wantTypes := []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Float64, arrow.BinaryTypes.String}
	for i, f := range tbl.Schema().Fields() {
		if f.Name != in.Columns[i].Name || !arrow.TypeEqual(f.Type, wantTypes[i]) || f.Nullable {
			t.Errorf("arrow field %d = %v, want %s %v not null", i, f, in.Columns[i].Name, wantTypes[i])
		}
	}
	for i := range in.Columns {
		chunks := tbl.Column(i).Data().Chunks()
		if len(chunks) != 1 {
			t.Fatalf("column %d: %d chunks", i, len(chunks))
		}
		c := &in.Columns[i]
		switch arr := chunks[0].(type) {
		case *array.Int64:
			if !slices.Equal(arr.Int64Values(), c.Int64) {
				t.Errorf("%s: arrow reads %v, want %v", c.Name, arr.Int64Values(), c.Int64)
			}
		case *array.Float64:
			for j, v := range arr.Float64Values() {
				if canonicalBits(v) != canonicalBits(c.Float64[j]) {
					t.Errorf("%s[%d]: arrow reads %v, want %v", c.Name, j, v, c.Float64[j])
				}
			}
		case *array.String:
			for j := range arr.Len() {
				if arr.Value(j) != c.String[j] {
					t.Errorf("%s[%d]: arrow reads %q, want %q", c.Name, j, arr.Value(j), c.String[j])
				}
			}
		default:
			t.Errorf("column %d: unexpected arrow array %T", i, arr)
		}
	}
}

func TestArrowReadsLargeTable(t *testing.T) {
	in := largeTable(300000) // several pages per column
	b, err := Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	tbl := readWithArrow(t, b)
	defer tbl.Release()
	if tbl.NumRows() != 300000 {
		t.Fatalf("arrow reads %d rows", tbl.NumRows())
	}
	var got []float64
	for _, ch := range tbl.Column(1).Data().Chunks() {
		got = append(got, ch.(*array.Float64).Float64Values()...)
	}
	if !slices.Equal(got, in.Columns[1].Float64) {
		t.Error("arrow reads different mu values")
	}
	var geo []string
	for _, ch := range tbl.Column(2).Data().Chunks() {
		s := ch.(*array.String)
		for j := range s.Len() {
			geo = append(geo, s.Value(j))
		}
	}
	if !slices.Equal(geo, in.Columns[2].String) {
		t.Error("arrow reads different geometry values")
	}
}
