package formats

import (
	"fmt"

	"thv/artifacts/table"
)

// columns reads the typed columns of one decoded layout, keeping the first
// error, so that a decoder reads every column it needs and checks once.
type columns struct {
	layout string
	t      table.Table
	err    error
}

// read decodes b as a table of the named layout.
func read(layout string, b []byte) *columns {
	t, err := table.Decode(b)
	return &columns{layout: layout, t: t, err: err}
}

// has reports whether the table has a column called name.
func (c *columns) has(name string) bool {
	_, err := c.t.Col(name)
	return c.err == nil && err == nil
}

func (c *columns) int64s(name string) []int64 { return column(c, name, table.Table.Int64s) }

func (c *columns) float64s(name string) []float64 { return column(c, name, table.Table.Float64s) }

func (c *columns) strings(name string) []string { return column(c, name, table.Table.Strings) }

// column reads one column with typed (table.Table.Int64s, Float64s or
// Strings) unless an error came first, and keeps the error.
func column[T any](c *columns, name string, typed func(table.Table, string) ([]T, error)) []T {
	if c.err != nil {
		return nil
	}
	v, err := typed(c.t, name)
	c.err = err
	return v
}

// check returns the first error met, naming the layout.
func (c *columns) check() error {
	if c.err != nil {
		return fmt.Errorf("%s table: %w", c.layout, c.err)
	}
	return nil
}

// encode writes a table of the given columns.
func encode(layout string, cols ...table.Column) ([]byte, error) {
	b, err := table.Encode(table.Table{Columns: cols})
	if err != nil {
		return nil, fmt.Errorf("%s table: %w", layout, err)
	}
	return b, nil
}

// metric is a named metric column of a layout whose rows are Rs, with the
// field of a row that holds its value (a V).
type metric[R, V any] struct {
	name  string
	field func(*R) *V
}

// metricOf returns the value in row of the metric called name, and whether
// metrics has one.
func metricOf[R, V any](metrics []metric[R, V], row *R, name string) (V, bool) {
	for _, m := range metrics {
		if m.name == name {
			return *m.field(row), true
		}
	}
	var zero V
	return zero, false
}
