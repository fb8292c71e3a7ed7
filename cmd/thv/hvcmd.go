package main

import "github.com/spf13/cobra"

// newHVCommand is a placeholder; the real `thv hv` lives here.
func newHVCommand() *cobra.Command { return &cobra.Command{Use: "hv"} }
