package table

import (
	"errors"
	"fmt"
	"math"
	"unicode/utf8"
)

// Table is a set of named, equally long columns: the in-memory form of every
// Parquet artifact of the pipeline. Column order is kept in the file.
type Table struct {
	Columns []Column
}

// Column is one column of a Table. Exactly one of Int64, Float64 and String
// is non-nil; it holds the values, one per row. An empty column has a
// non-nil empty slice, which is what gives it a type (the constructors below
// take care of that). Float64 may hold NaN and ±Inf; Encode stores
// every NaN with the same bit pattern and keeps -0 distinct from +0.
type Column struct {
	Name    string
	Int64   []int64
	Float64 []float64
	String  []string
}

// Column types, as returned by Column.Type.
const (
	TypeInt64   = "int64"
	TypeFloat64 = "float64"
	TypeString  = "string"
)

// Int64Column returns an int64 column; a nil v gives an empty column.
func Int64Column(name string, v []int64) Column {
	if v == nil {
		v = []int64{}
	}
	return Column{Name: name, Int64: v}
}

// Float64Column returns a float64 column; a nil v gives an empty column.
func Float64Column(name string, v []float64) Column {
	if v == nil {
		v = []float64{}
	}
	return Column{Name: name, Float64: v}
}

// StringColumn returns a string column; a nil v gives an empty column.
func StringColumn(name string, v []string) Column {
	if v == nil {
		v = []string{}
	}
	return Column{Name: name, String: v}
}

// NewTable returns a table of cols after checking it with Validate.
func NewTable(cols ...Column) (Table, error) {
	t := Table{Columns: cols}
	if err := t.Validate(); err != nil {
		return Table{}, err
	}
	return t, nil
}

// Type returns TypeInt64, TypeFloat64 or TypeString, or "" if the column
// does not have exactly one non-nil slice.
func (c *Column) Type() string {
	n, typ := 0, ""
	if c.Int64 != nil {
		n, typ = n+1, TypeInt64
	}
	if c.Float64 != nil {
		n, typ = n+1, TypeFloat64
	}
	if c.String != nil {
		n, typ = n+1, TypeString
	}
	if n != 1 {
		return ""
	}
	return typ
}

// Len returns the number of values in the column.
func (c *Column) Len() int {
	switch c.Type() {
	case TypeInt64:
		return len(c.Int64)
	case TypeFloat64:
		return len(c.Float64)
	case TypeString:
		return len(c.String)
	}
	return 0
}

// NumRows returns the length of the columns (0 for a table without columns).
func (t Table) NumRows() int {
	if len(t.Columns) == 0 {
		return 0
	}
	return t.Columns[0].Len()
}

// Names returns the column names in order.
func (t Table) Names() []string {
	names := make([]string, len(t.Columns))
	for i := range t.Columns {
		names[i] = t.Columns[i].Name
	}
	return names
}

// Validate checks that t has at least one column, that names are non-empty,
// valid UTF-8 and unique, that each column has exactly one typed slice, that
// all columns have the same length, and that strings are valid UTF-8 (the
// Parquet STRING type requires it).
func (t Table) Validate() error {
	if len(t.Columns) == 0 {
		return errors.New("table has no columns")
	}
	seen := make(map[string]bool, len(t.Columns))
	rows := -1
	for i := range t.Columns {
		c := &t.Columns[i]
		switch {
		case c.Name == "":
			return fmt.Errorf("table column %d has an empty name", i)
		case !utf8.ValidString(c.Name):
			return fmt.Errorf("table column %d: name %q is not valid UTF-8", i, c.Name)
		case seen[c.Name]:
			return fmt.Errorf("table has two columns named %q", c.Name)
		}
		seen[c.Name] = true
		if c.Type() == "" {
			return fmt.Errorf("table column %q must have exactly one of Int64, Float64, String non-nil", c.Name)
		}
		if rows < 0 {
			rows = c.Len()
		} else if c.Len() != rows {
			return fmt.Errorf("ragged table: column %q has %d rows, column %q has %d", c.Name, c.Len(), t.Columns[0].Name, rows)
		}
		for j, s := range c.String {
			if !utf8.ValidString(s) {
				return fmt.Errorf("table column %q row %d: string %q is not valid UTF-8", c.Name, j, s)
			}
		}
	}
	return nil
}

// Col returns the column called name, which aliases t's storage.
func (t Table) Col(name string) (*Column, error) {
	for i := range t.Columns {
		if t.Columns[i].Name == name {
			return &t.Columns[i], nil
		}
	}
	return nil, fmt.Errorf("no column %q (columns: %q)", name, t.Names())
}

// Int64s returns the values of the int64 column called name.
func (t Table) Int64s(name string) ([]int64, error) {
	c, err := t.typedCol(name, TypeInt64)
	if err != nil {
		return nil, err
	}
	return c.Int64, nil
}

// Float64s returns the values of the float64 column called name.
func (t Table) Float64s(name string) ([]float64, error) {
	c, err := t.typedCol(name, TypeFloat64)
	if err != nil {
		return nil, err
	}
	return c.Float64, nil
}

// Strings returns the values of the string column called name.
func (t Table) Strings(name string) ([]string, error) {
	c, err := t.typedCol(name, TypeString)
	if err != nil {
		return nil, err
	}
	return c.String, nil
}

func (t Table) typedCol(name, typ string) (*Column, error) {
	c, err := t.Col(name)
	if err != nil {
		return nil, err
	}
	if got := c.Type(); got != typ {
		return nil, fmt.Errorf("column %q is %s, not %s", name, got, typ)
	}
	return c, nil
}

// Equal reports whether t and u have the same column names, types and
// values, comparing floats as Encode stores them: all NaNs are equal,
// and -0 differs from +0. Equal tables encode to identical bytes.
func (t Table) Equal(u Table) bool {
	if len(t.Columns) != len(u.Columns) {
		return false
	}
	for i := range t.Columns {
		a, b := &t.Columns[i], &u.Columns[i]
		if a.Name != b.Name || a.Type() != b.Type() || a.Len() != b.Len() {
			return false
		}
		switch a.Type() {
		case TypeInt64:
			for j := range a.Int64 {
				if a.Int64[j] != b.Int64[j] {
					return false
				}
			}
		case TypeFloat64:
			for j := range a.Float64 {
				if canonicalBits(a.Float64[j]) != canonicalBits(b.Float64[j]) {
					return false
				}
			}
		case TypeString:
			for j := range a.String {
				if a.String[j] != b.String[j] {
					return false
				}
			}
		}
	}
	return true
}

// canonicalNaN is the one NaN written to files. NaN payloads differ between
// code paths (0/0 vs math.NaN) without meaning anything, and would otherwise
// make equal results hash differently.
var canonicalNaN = math.NaN()

func canonicalBits(v float64) uint64 {
	if v != v {
		v = canonicalNaN
	}
	return math.Float64bits(v)
}
