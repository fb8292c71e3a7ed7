package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"thv/stages/protocol"
)

func init() {
	// Computed only when --version asks: the fingerprint hashes the
	// embedded sources, milliseconds no other command should pay.
	cobra.AddTemplateFunc("thvVersion", versionText)
}

// versionTemplate prints versionText.
const versionTemplate = "{{thvVersion}}\n"

// versionText is what thv --version prints: the module's version and the
// VCS revision it was built from, the Go toolchain and platform, and the
// code fingerprint, the identity of the code the task keys are computed
// from (a thv with another fingerprint may compute other keys).
func versionText() string {
	var b strings.Builder
	version, _ := buildVersion()
	if version == "" {
		version = "(no build info)"
	}
	fmt.Fprintf(&b, "thv %s\n", strings.TrimSpace(version))
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Sum != "" {
		fmt.Fprintf(&b, "module sum %s\n", bi.Main.Sum)
	}
	fmt.Fprintf(&b, "%s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	fp, err := protocol.CodeFingerprint()
	if err != nil {
		fp = "unknown (" + err.Error() + ")"
	}
	fmt.Fprintf(&b, "code fingerprint %s", fp)
	return b.String()
}
