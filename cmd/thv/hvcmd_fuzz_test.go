package main

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"thv/hv"
)

// referencePoints is a plain restatement of the input format of thv hv:
// split at newlines; skip blank lines and # comments; a point is the
// fields between commas and runs of white space, where a comma with no
// field before or after it is an error; every field a finite float; every
// point as many fields as the first. It returns the points, or the number
// of the first bad line (0 for "no points").
func referencePoints(s string) ([][]float64, int) {
	var pts [][]float64
	for i, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		if strings.Contains(line, ",") {
			for part := range strings.SplitSeq(line, ",") {
				if strings.TrimSpace(part) == "" {
					return nil, i + 1
				}
			}
		}
		var p []float64
		for _, w := range strings.FieldsFunc(line, func(r rune) bool { return r == ',' || unicode.IsSpace(r) }) {
			x, err := strconv.ParseFloat(w, 64)
			if math.IsNaN(x) || math.IsInf(x, 0) || (err != nil && x == 0) {
				return nil, i + 1
			}
			p = append(p, x)
		}
		if len(pts) > 0 && len(p) != len(pts[0]) {
			return nil, i + 1
		}
		pts = append(pts, p)
	}
	if len(pts) == 0 {
		return nil, 0
	}
	return pts, -1
}

// FuzzReadPoints: the parser of thv hv agrees with referencePoints on every
// input: the same points, bit for bit, or an error naming the same line
// (with the bad token cut to 40 bytes). On what it accepts, the volume is
// either finite, ≥ 0 and at most the volume of the points' bounding box,
// or reported as an overflow.
func FuzzReadPoints(f *testing.F) {
	for _, s := range []string{
		"1 3\n2 2\n3 1\n", "# f1,f2\n0.9,0.2\r\n0.1 , 0.8\n", "1,,2\n", "1 nan\n", "1e308 1e308\n",
		"1e160 1e160 1\n1e159 2e160 1\n", "\t-0 +1e-320\n", "1 2\n3\n", "0x1p-2 1_0\n", "\u00a01\u20282\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		pts, err := readPoints(bytes.NewReader(data), 0)
		want, badLine := referencePoints(string(data))
		if err != nil {
			msg := err.Error()
			wantPrefix := fmt.Sprintf("line %d: ", badLine)
			if badLine == 0 {
				wantPrefix = "no points"
			}
			if !strings.HasPrefix(msg, wantPrefix) {
				t.Fatalf("error %q, the reference says line %d", msg, badLine)
			}
			if len(msg) > 200 {
				t.Fatalf("error of %d bytes", len(msg))
			}
			return
		}
		if badLine >= 0 {
			t.Fatalf("accepted %d points; the reference refuses line %d", len(pts), badLine)
		}
		if len(pts) != len(want) {
			t.Fatalf("%d points, the reference %d", len(pts), len(want))
		}
		for i := range pts {
			for j := range pts[i] {
				if math.Float64bits(pts[i][j]) != math.Float64bits(want[i][j]) {
					t.Fatalf("point %d coordinate %d: %v, the reference %v", i, j, pts[i][j], want[i][j])
				}
			}
		}
		d := len(pts[0])
		if len(pts) > 12 || d > 6 {
			return // keep the volume cheap
		}
		v := hv.Volume(pts, nil)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return // thv hv reports it as an overflow (TestHVCommandErrors)
		}
		box := 1.0
		for j := range d {
			hi := 0.0
			for _, p := range pts {
				hi = max(hi, p[j])
			}
			box *= hi
		}
		if v < 0 || (!math.IsInf(box, 1) && v > box*(1+1e-9)) {
			t.Fatalf("volume %v outside [0, %v] (the bounding box)", v, box)
		}
	})
}
