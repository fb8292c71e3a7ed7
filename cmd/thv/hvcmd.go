package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"thv/internal/hvcli"
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
		RunE: func(cmd *cobra.Command, args []string) error { return printVolume(cmd, args, refFlag) },
	}
	cmd.Flags().StringVar(&refFlag, "ref", "", "reference point r1,...,rd (default: the origin)")
	return cmd
}

// printVolume prints the hypervolume of the points of args' file (or
// standard input) above ref (the origin unless --ref).
func printVolume(cmd *cobra.Command, args []string, refFlag string) error {
	var ref []float64
	if cmd.Flags().Changed("ref") {
		var err error
		if ref, err = hvcli.ParseRef(refFlag); err != nil {
			return err
		}
	}
	file := ""
	if len(args) == 1 {
		file = args[0]
	}
	v, err := hvcli.Volume(file, cmd.InOrStdin(), ref)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "%.17g\n", v)
	return err
}

// The input's reading, in internal/hvcli (shared with the lean hv binary,
// cmd/hv), under the names this package's tests use.
var readPoints = hvcli.ReadPoints

const maxHVInputBytes = hvcli.MaxInputBytes
