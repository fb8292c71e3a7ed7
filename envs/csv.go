package envs

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// LoadCSV reads a user instance: one arm per row, one mean per column, values
// in [0, 1]. A first row that is not numeric is taken as a header. Errors name
// the offending line.
func LoadCSV(r io.Reader) (*Instance, error) {
	cr := csv.NewReader(r)
	cr.Comment = '#'
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	in := &Instance{}
	d := 0
	for row := 0; ; row++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading instance CSV: %w", err)
		}
		line, _ := cr.FieldPos(0)
		if row == 0 && !numeric(rec[0]) {
			continue // header
		}
		if d == 0 {
			d = len(rec)
		} else if len(rec) != d {
			return nil, fmt.Errorf("line %d: expected %d values (as on the first data line), got %d", line, d, len(rec))
		}
		m := make([]float64, d)
		for j, f := range rec {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil {
				return nil, fmt.Errorf("line %d, column %d: %q is not a number", line, j+1, f)
			}
			if math.IsNaN(v) || v < 0 || v > 1 {
				return nil, fmt.Errorf("line %d, column %d: mean %v is outside [0, 1]", line, j+1, v)
			}
			m[j] = v
		}
		in.Means = append(in.Means, m)
	}
	if len(in.Means) == 0 {
		return nil, fmt.Errorf("instance CSV has no arms")
	}
	in.Front = make([]bool, len(in.Means))
	return in, nil
}

func numeric(s string) bool {
	_, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return err == nil
}
