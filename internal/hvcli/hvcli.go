// Package hvcli is the hypervolume command's reading of its input and its
// computation, shared by thv hv (cmd/thv) and the lean hv binary (cmd/hv),
// which starts in a fraction of thv's time because it links nothing else.
package hvcli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"thv/hv"
	"thv/pipeline/userfile"
)

// MaxLineBytes bounds one line of input.
const MaxLineBytes = 1 << 20

// MaxInputBytes bounds the whole input, a file or standard input: the
// points are kept, so an endless stream would grow the process without
// end. The densest input ("1\n" lines) takes 32 bytes of memory per input
// byte: 16 MiB measured 540 MB and 14 s at most; it holds some 400,000
// points of d = 2 at full precision (a front of 5000 points of d = 5 is
// about 0.5 MB).
const MaxInputBytes = 16 << 20

// Volume reads the points of file (standard input stdin if file is "" or
// "-") and returns their hypervolume with respect to ref (nil: the
// origin). Every error names the input; a volume beyond the float64 range
// is an error, never a printed Inf or NaN.
func Volume(file string, stdin io.Reader, ref []float64) (float64, error) {
	in := userfile.LimitReader(stdin, MaxInputBytes, "standard input")
	name := "standard input"
	if file != "" && file != "-" {
		f, err := userfile.Open(file, MaxInputBytes)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		in, name = f, file
	}
	pts, err := ReadPoints(in, len(ref))
	if errors.Is(err, userfile.ErrTooLarge) {
		return 0, err // it names the input
	}
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	v := hv.Volume(pts, ref)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%s: the hypervolume overflows float64 (computed %v from finite coordinates): scale the coordinates down", name, v)
	}
	return v, nil
}

// ParseRef parses the --ref value: d finite numbers separated by commas or
// white space.
func ParseRef(s string) ([]float64, error) {
	ref, err := appendFields(nil, s)
	if err != nil {
		return nil, fmt.Errorf("--ref: %w", err)
	}
	if len(ref) == 0 {
		return nil, errors.New("--ref: no coordinates")
	}
	return ref, nil
}

// ReadPoints reads one point per line, streaming: a line longer than
// MaxLineBytes is an error. If d > 0 (the dimension of --ref) every point
// must have d coordinates, otherwise as many as the first one. The
// coordinates share one backing array: parsing allocates little, which
// matters when a process measures one large front and exits.
func ReadPoints(r io.Reader, d int) ([][]float64, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLineBytes)
	var coords []float64
	fromRef := d > 0
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' {
			continue
		}
		before := len(coords)
		var err error
		if coords, err = appendFields(coords, text); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		got := len(coords) - before
		if d == 0 {
			d = got
		}
		if got != d {
			if fromRef {
				return nil, fmt.Errorf("line %d: expected %d coordinates (as many as --ref), got %d", line, d, got)
			}
			return nil, fmt.Errorf("line %d: expected %d coordinates, got %d", line, d, got)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("line %d: longer than 1 MiB (%d bytes), the limit on a line", line+1, MaxLineBytes)
		}
		return nil, err
	}
	if len(coords) == 0 {
		return nil, errors.New("no points")
	}
	pts := make([][]float64, len(coords)/d)
	for i := range pts {
		pts[i] = coords[i*d : (i+1)*d : (i+1)*d]
	}
	return pts, nil
}

// appendFields splits s at commas and runs of white space, parses each
// field as a finite number and appends it to dst. An empty field between two
// commas, or before or after one, is an error.
func appendFields(dst []float64, s string) ([]float64, error) {
	field := 0
	commas := strings.IndexByte(s, ',') >= 0
	for part := range strings.SplitSeq(s, ",") {
		words := 0
		for w := range strings.FieldsSeq(part) {
			words++
			field++
			x, err := strconv.ParseFloat(w, 64)
			if err != nil && !errors.Is(err, strconv.ErrRange) {
				return dst, fmt.Errorf("field %d: %s is not a number", field, quoteToken(w))
			}
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return dst, fmt.Errorf("field %d: %s is not a finite number", field, quoteToken(w))
			}
			dst = append(dst, x)
		}
		if words == 0 && commas {
			return dst, fmt.Errorf("field %d is empty", field+1)
		}
	}
	return dst, nil
}

// quoteToken quotes a field for an error message, cut to 40 bytes (at a
// rune boundary) and marked … if longer: a bad field may be a whole line.
func quoteToken(w string) string {
	const max = 40
	if len(w) <= max {
		return strconv.Quote(w)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(w[cut]) {
		cut--
	}
	return strconv.Quote(w[:cut]) + "…"
}
