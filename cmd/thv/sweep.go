package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"thv/pipeline/tempdir"
)

// makesTempData names the commands that make temp directories (extracted
// bundles, exported results, scratch stores, container bundles and
// outputs): when one starts, it first removes those of thv processes that
// were killed (tempdir.Sweep). Commands with --executor container do too.
var makesTempData = map[string]bool{"verify": true, "verify-bundle": true, "bundle": true, "image": true}

// sweepTemp runs tempdir.Sweep for a command that makes temp data. A
// directory it cannot remove is a warning, never an error of the command.
func sweepTemp(cmd *cobra.Command, stderr io.Writer) {
	if !makesTempData[cmd.Name()] {
		if f := cmd.Flags().Lookup("executor"); f == nil || f.Value.String() != "container" {
			return
		}
	}
	if _, err := tempdir.Sweep(); err != nil {
		fmt.Fprintf(stderr, "thv: warning: leftover temp data of a killed thv: %v\n", err)
	}
}
