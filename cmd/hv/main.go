// Command hv prints the exact hypervolume of a set of points: thv hv in a
// binary of its own. thv links the whole pipeline (the S3 client, the
// container builder, the plotting library), whose package initialisation
// alone takes several milliseconds at every start; hv links the
// hypervolume and its input reader only (internal/hvcli), and reads,
// computes and prints exactly as thv hv does.
//
//	hv [--ref r1,...,rd] [FILE]
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"thv/internal/hvcli"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("hv", flag.ContinueOnError)
	fs.SetOutput(stderr)
	refFlag := fs.String("ref", "", "reference point r1,...,rd (default: the origin)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: hv [--ref r1,...,rd] [FILE]\n\nThe exact hypervolume of the points of FILE (or standard input), one per\nline, as thv hv computes it (thv hv --help says more).")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 1 {
		fmt.Fprintf(stderr, "hv: at most one FILE, got %d arguments\n", fs.NArg())
		return 2
	}
	var ref []float64
	refSet := false
	fs.Visit(func(f *flag.Flag) { refSet = refSet || f.Name == "ref" })
	if refSet {
		var err error
		if ref, err = hvcli.ParseRef(*refFlag); err != nil {
			fmt.Fprintln(stderr, "hv:", err)
			return 1
		}
	}
	v, err := hvcli.Volume(fs.Arg(0), stdin, ref)
	if err != nil {
		fmt.Fprintln(stderr, "hv:", err)
		return 1
	}
	fmt.Fprintf(stdout, "%.17g\n", v)
	return 0
}
