package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"thv/hv"
	"thv/pipeline/userfile"
)

func newHVCommand() *cobra.Command {
	var refFlag string
	cmd := &cobra.Command{
		Use:   "hv [--ref r1,...,rd] [FILE]",
		Short: "Print the exact hypervolume of a set of points",
		Long: `Print the exact hypervolume dominated by a set of points, under
maximisation, with respect to a reference point (the origin unless --ref
is given).

The points are read from FILE, or from standard input if FILE is absent or
"-": one point per line, coordinates separated by commas or white space.
Blank lines and lines starting with # are ignored. Every point must have
the same number of coordinates d (and --ref, if given, d values), and every
coordinate must be a finite number. Points that are dominated, or not
strictly above the reference point in every coordinate, add nothing.

The result is printed alone on standard output, with 17 significant
digits. Any malformed input is an error that names its line; a line longer
than 1 MiB is an error too (the input is read line by line, never whole),
and so is an input longer than 16 MiB. FILE must be a regular file (not a
named pipe or a device: pipe those to standard input).

The volume is computed in float64. If it, or a volume computed on the way
to it, exceeds the float64 range (about 1.8e308: coordinates of 1e160 in
three dimensions are enough), the result is not a finite number: thv hv
then prints nothing and fails (exit status 1) rather than print Inf or
NaN. Scale the coordinates down (the volume scales by the product of the
factors) and scale the result back.

The algorithm is exact for every d: a sweep for d = 2 and d = 3
(O(n log n)), HV4D+ for d = 4 (O(n^2)), and WFG down to HV4D+ for d >= 5.`,
		Example: `  $ printf '1 3\n2 2\n3 1\n' | thv hv
  6
  $ cat front.csv
  # f1,f2,f3
  0.9,0.2,0.1
  0.1,0.8,0.4
  $ thv hv --ref 0.05,0.05,0.05 front.csv
  0.019125000000000003`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var ref []float64
			if cmd.Flags().Changed("ref") {
				var err error
				if ref, err = parseRef(refFlag); err != nil {
					return err
				}
			}
			in := userfile.LimitReader(cmd.InOrStdin(), maxHVInputBytes, "standard input")
			name := "standard input"
			if len(args) == 1 && args[0] != "-" {
				f, err := userfile.Open(args[0], maxHVInputBytes)
				if err != nil {
					return err
				}
				defer f.Close()
				in, name = f, args[0]
			}
			pts, err := readPoints(in, len(ref))
			if errors.Is(err, userfile.ErrTooLarge) {
				return err // it names the input
			}
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			v := hv.Volume(pts, ref)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%s: the hypervolume overflows float64 (computed %v from finite coordinates): scale the coordinates down", name, v)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "%.17g\n", v)
			return err
		},
	}
	cmd.Flags().StringVar(&refFlag, "ref", "", "reference point r1,...,rd (default: the origin)")
	return cmd
}

// parseRef parses the --ref value: d finite numbers separated by commas or
// white space.
func parseRef(s string) ([]float64, error) {
	ref, err := parseFields(s)
	if err != nil {
		return nil, fmt.Errorf("--ref: %w", err)
	}
	if len(ref) == 0 {
		return nil, errors.New("--ref: no coordinates")
	}
	return ref, nil
}

// maxLineBytes bounds one line of input to thv hv.
const maxLineBytes = 1 << 20

// maxHVInputBytes bounds the whole input of thv hv, a file or standard
// input: the points are kept, so an endless stream would grow thv without
// end. The densest input ("1\n" lines) takes 32 bytes of memory per input
// byte: 16 MiB measured 540 MB and 14 s at most; it holds some 400,000
// points of d = 2 at full precision (the largest front of
// docs/performance.md, 5000 points of d = 5, is 0.5 MB).
const maxHVInputBytes = 16 << 20

// readPoints reads one point per line, streaming: a line longer than
// maxLineBytes is an error. If d > 0 (the dimension of --ref) every point
// must have d coordinates, otherwise as many as the first one. The
// coordinates share one backing array: parsing allocates little, which
// matters when a process measures one large front and exits.
func readPoints(r io.Reader, d int) ([][]float64, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLineBytes)
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
			return nil, fmt.Errorf("line %d: longer than 1 MiB (%d bytes), the limit on a line", line+1, maxLineBytes)
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

// parseFields parses s as appendFields does.
func parseFields(s string) ([]float64, error) {
	return appendFields(nil, s)
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
