package main

import (
	"fmt"
	"io"
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
func bundleOptions(name, profile string) bundle.Options {
	return bundle.Options{
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
	opt := bundleOptions(params, proj.Lock.Profile)
	var err error
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

// verifyAccount is the account of a verification of a bundle: what the
// re-execution covered, results/, and the checks of its other parts.
func verifyAccount(rep *pipeline.VerifyReport, parts []bundle.Check) []bundle.Check {
	var out []bundle.Check
	checked := 0
	for _, k := range rep.Kinds {
		checked += k.Checked
	}
	if rep.Complete() {
		out = append(out, bundle.Check{Item: "the lock and store/", Status: bundle.Reexecuted,
			Reason: fmt.Sprintf("all %d tasks re-executed by this thv from their recorded inputs; every output is the lock's and every object of the store was re-hashed", rep.Tasks())})
	} else {
		out = append(out,
			bundle.Check{Item: "the lock and store/", Status: bundle.Reexecuted,
				Reason: fmt.Sprintf("a random sample of %d of the %d tasks re-executed; every object of the store was re-hashed", checked, rep.Tasks())},
			bundle.Check{Item: "the other tasks' outputs", Status: bundle.NotChecked,
				Reason: fmt.Sprintf("%d tasks were not re-executed (--sample)", rep.Tasks()-checked)})
	}
	out = append(out,
		bundle.Check{Item: "results/", Status: bundle.Rederived,
			Reason: "exported afresh from the store and compared: copies of outputs byte for byte, the figures' PNGs drawn again (their pixels within the tolerance for another CPU, every other byte identical), the page byte for byte"},
		bundle.Check{Item: "results/" + protocol.ReportName + "'s run block", Status: bundle.NotChecked,
			Reason: "the date, executor, thv and last thv verify of the run that wrote the page: stated by the bundle's author (plain text only)"})
	return append(out, parts...)
}

// maxListedFiles is how many files of a not-checked part the account
// prints.
const maxListedFiles = 10

// printAccount prints the account, checked parts first.
func printAccount(w io.Writer, checks []bundle.Check) {
	fmt.Fprintln(w, "checked:")
	for _, c := range checks {
		if c.Status != bundle.NotChecked {
			fmt.Fprintf(w, "  %s (%s): %s\n", c.Item, c.Status, c.Reason)
		}
	}
	fmt.Fprintln(w, "not checked:")
	for _, c := range checks {
		if c.Status == bundle.NotChecked {
			fmt.Fprintf(w, "  %s: %s\n", c.Item, c.Reason)
			for i, f := range c.Files {
				if i == maxListedFiles {
					fmt.Fprintf(w, "    … and %d more (--dir DIR keeps them to read)\n", len(c.Files)-i)
					break
				}
				fmt.Fprintf(w, "    %q\n", f)
			}
		}
	}
}
