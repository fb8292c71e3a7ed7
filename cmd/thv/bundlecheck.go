package main

import (
	"fmt"
	"path/filepath"
	"runtime/debug"
	"strings"

	thvmodule "thv"
	"thv/pipeline"
	"thv/pipeline/bundle"
	"thv/stages/protocol"
)

// bundleOptions are the options thv bundle writes a bundle of the protocol
// file name and profile with, but for its contents (results, source,
// image) and the tool's version and date: verify-bundle regenerates the
// crate with the same ones.
// judged names the protocol the bundle's results are of (its crate's
// preview says it).
func bundleOptions(name, profile, judged string) bundle.Options {
	return bundle.Options{
		Judged:    judged,
		Protocol:  bundle.File{Path: name},
		Profile:   profile,
		LockName:  lockName(name, profile),
		Tool:      bundle.Tool{Name: "thv"},
		Reproduce: fmt.Sprintf("thv repro --params %s --profile %s --store store", name, profile),
		Verify:    "thv verify-bundle <this archive>",
		Rebuild:   rebuildCommand,
		Report:    protocol.ReportName,
	}
}

// rebuildCommand builds thv from a bundle's source/, offline: the modules
// are vendored.
const rebuildCommand = "cd source && CGO_ENABLED=0 go build -mod=vendor -trimpath ./cmd/thv"

// rebuildIn is rebuildCommand in the bundle extracted in dir.
func rebuildIn(dir string) string {
	return strings.Replace(rebuildCommand, "cd source", "cd "+dir+"/source", 1)
}

func lockName(params, profile string) string {
	return filepath.Base(protocol.LockPath("", params, profile))
}

// checkBundleContents checks the files of the bundle extracted in dir
// against what a bundle of its lock holds and what thv writes for it
// (bundle.CheckContents), and returns its account.
func checkBundleContents(proj *protocol.Project, status *pipeline.Report, dir string, m bundle.Manifest, params string) ([]bundle.Check, error) {
	d, err := proj.Describe()
	if err != nil {
		return nil, err
	}
	opt := bundleOptions(params, proj.Lock.Profile, d.Name())
	if opt.Drawn, err = protocol.DrawnResults(status); err != nil {
		return nil, err
	}
	_, checks, err := bundle.CheckContents(proj.Project, status, dir, m, opt)
	return checks, err
}

// checkBundleSource checks the bundle's source/ against its lock's code
// units (bundle.CheckSource), with this thv's third-party table, and its
// other files against this thv's own source.
func checkBundleSource(dir string, lock *pipeline.Lock) ([]bundle.Check, error) {
	checks, err := bundle.CheckSource(dir, lock.Code, bundle.SourceCode{Module: thvModulePath(), ThirdParty: thvmodule.ThirdParty, Own: thvmodule.Module})
	if err != nil {
		return nil, err
	}
	vendor, err := bundle.CheckVendor(dir, bundle.ModuleCache())
	return append(checks, vendor...), err
}

// thvModulePath is the path of thv's module, from the build info.
func thvModulePath() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Path != "" {
		return bi.Main.Path
	}
	return "thv"
}
