package table

import (
	"strings"
	"testing"
)

func TestTableValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		t    Table
		want string
	}{
		{"no columns", Table{}, "no columns"},
		{"empty name", Table{Columns: []Column{Int64Column("", nil)}}, "empty name"},
		{"duplicate", Table{Columns: []Column{Int64Column("a", nil), Float64Column("a", nil)}}, `two columns named "a"`},
		{"ragged", Table{Columns: []Column{Int64Column("a", []int64{1, 2}), Float64Column("b", []float64{1})}}, "ragged"},
		{"no slice", Table{Columns: []Column{{Name: "a"}}}, "exactly one"},
		{"two slices", Table{Columns: []Column{{Name: "a", Int64: []int64{1}, String: []string{"x"}}}}, "exactly one"},
		{"bad utf8 name", Table{Columns: []Column{Int64Column("\xff", nil)}}, "UTF-8"},
		{"bad utf8 value", Table{Columns: []Column{StringColumn("s", []string{"ok", "\xc3"})}}, "row 1"},
	} {
		err := tc.t.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Validate = %v, want %q", tc.name, err, tc.want)
		}
		if _, err := Encode(tc.t); err == nil {
			t.Errorf("%s: Encode accepted an invalid table", tc.name)
		}
	}
	if _, err := NewTable(Int64Column("a", []int64{1}), StringColumn("b", []string{"x"})); err != nil {
		t.Errorf("valid table rejected: %v", err)
	}
}

func TestTableCol(t *testing.T) {
	tb := specialTable()
	c, err := tb.Col("seed")
	if err != nil || c.Type() != TypeInt64 || c.Len() != 6 {
		t.Fatalf("Col(seed) = %+v, %v", c, err)
	}
	c.Int64[0] = 99 // Col aliases the table
	if tb.Columns[1].Int64[0] != 99 {
		t.Error("Col returned a copy")
	}
	if _, err := tb.Col("nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("Col(nope) error = %v", err)
	}
	if _, err := tb.Float64s("seed"); err == nil || !strings.Contains(err.Error(), "int64, not float64") {
		t.Errorf("Float64s(seed) error = %v", err)
	}
	if tb.NumRows() != 6 {
		t.Errorf("NumRows = %d", tb.NumRows())
	}
}
