package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	thvmodule "thv"
	"thv/artifacts"
	"thv/pipeline"
	"thv/pipeline/bundle"
	"thv/pipeline/tempdir"
	"thv/pipeline/userfile"
	"thv/stages/compare"
	"thv/stages/protocol"
	"thv/stages/report"
)

// bundleImage writes the OCI image of this binary as an oci-archive and
// returns its manifest digest (imagecmd.go). A bundle made with --no-image
// holds none, and its crate says so.
var bundleImage = imageArchive

func newBundleCommand() *cobra.Command {
	var pf projectFlags
	var out string
	var noImage, noVendor bool
	cmd := &cobra.Command{
		Use:   "bundle -o FILE [--no-image] [--no-vendor]",
		Short: "Write one archive with everything needed to check the reproduction bit for bit",
		Long: `Write a deterministic tar.gz holding the protocol file, the lock, results/,
a store with every artifact the lock's tasks output (store/), the module's
source (source/), the OCI image (image/thv-oci.tar, when built in), a
SHA256SUMS manifest, and ro-crate-metadata.json (RO-Crate: Workflow Run
and Provenance Run Crate profiles) with ro-crate-preview.html.

Every task must be up to date (thv repro first). The same project and thv
give the same bytes. Check a bundle with thv verify-bundle.`,
		Example: `  thv bundle -o paper.tar.gz
  thv bundle --profile quick -o quick.tar.gz`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return errors.New("-o FILE: say where to write the bundle, e.g. -o paper.tar.gz")
			}
			if fi, err := os.Stat(filepath.Dir(out)); err != nil || !fi.IsDir() {
				return fmt.Errorf("-o %s: the directory %s does not exist", out, filepath.Dir(out))
			}
			if len(pf.set) > 0 {
				return errors.New("--set: a bundle's protocol is a file; write the overrides into a params file (or a profile) and pass --params")
			}
			name, data := "params.yaml", thvmodule.DefaultParams
			if pf.params != "" {
				var err error
				name = filepath.Base(pf.params)
				if data, err = userfile.ReadFile(pf.params, protocol.MaxParamsBytes); err != nil {
					return err
				}
			}
			if err := noOverrides(data); err != nil {
				return err
			}
			proj, err := pf.open(true)
			if err != nil {
				return err
			}
			profile := proj.Config.Profile
			status, err := proj.Status(cmd.Context())
			if err != nil {
				return err
			}
			if err := bundle.Current(proj.Project, status); err != nil {
				return err
			}
			// results/ is exported afresh from the store, so that it is
			// exactly what the lock's tables and figures tasks output.
			resultsDir, err := tempdir.New("thv-bundle-results-")
			if err != nil {
				return err
			}
			defer resultsDir.Remove()
			results := resultsDir.Path()
			// The page is the project's, readings included: what thv
			// readings wrote goes into the bundle as it is (verify-bundle
			// names it not checked: the bundle holds none of its tasks).
			if err := copyReadings(proj.ResultsDir(), results); err != nil {
				return err
			}
			proj.PreviousReport = filepath.Join(proj.ResultsDir(), protocol.ReportName) // its run block, if the same results
			proj.Run = reportRun("")
			proj.Config.Outputs.Results = results
			if _, err := proj.ExportResults(status); err != nil {
				return fmt.Errorf("exporting results: %w", err)
			}
			drawn, err := protocol.DrawnResults(status)
			if err != nil {
				return err
			}
			image := bundleImage
			if noImage {
				image = nil
			}
			described, err := proj.Describe()
			if err != nil {
				return err
			}
			// source/ builds offline: its modules are vendored.
			var vendor fs.FS
			if !noVendor {
				vendorDir, err := tempdir.New("thv-bundle-vendor-")
				if err != nil {
					return err
				}
				defer vendorDir.Remove()
				dir := filepath.Join(vendorDir.Path(), "vendor")
				if err := bundle.Vendor(cmd.Context(), thvmodule.Module, thvModulePath(), []string{thvModulePath() + "/cmd/thv"}, dir); err != nil {
					return fmt.Errorf("%w (or bundle without vendored modules: --no-vendor)", err)
				}
				vendor = os.DirFS(dir)
			}
			version, published := buildVersion()
			opt := bundleOptions(name, profile, described.Name())
			opt.Protocol.Data = data
			opt.Results, opt.Drawn, opt.Source, opt.Vendor, opt.Image = os.DirFS(results), drawn, thvmodule.Module, vendor, image
			opt.Tool.Version, opt.Tool.GoVersion, opt.Published = version, runtime.Version(), published
			errw := cmd.ErrOrStderr()
			opt.Progress = phaseBar(errw, "bundle")
			start := time.Now()
			sum, err := bundle.Write(cmd.Context(), proj.Project, out, opt)
			if err != nil {
				return err
			}
			holds := "no image (--no-image)"
			if sum.ImageDigest != "" {
				holds = "image " + sum.ImageDigest
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %.1f MB, %d files (%d tasks, %d store objects, %s) in %s\nsha256 %x\ncheck it with: thv verify-bundle %s\n",
				out, float64(sum.Bytes)/1e6, sum.Files, sum.Tasks, sum.Objects, holds, time.Since(start).Round(time.Millisecond), sum.SHA256, out)
			return nil
		},
	}
	pf.register(cmd)
	cmd.Flags().StringVarP(&out, "output", "o", "", "the bundle file to write (tar.gz)")
	cmd.Flags().BoolVar(&noVendor, "no-vendor", false, "leave the vendored modules out of source/ (about 9 MB smaller): building thv from source/ then needs the module proxy")
	cmd.Flags().BoolVar(&noImage, "no-image", false, "leave the OCI image out (15 MB smaller): the image is published for running the tasks in containers, never run by verify-bundle")
	return cmd
}

// phaseBar adapts phaseProgress to a single phase, on a terminal only:
// writing a bundle takes seconds, not minutes.
func phaseBar(w io.Writer, phase string) func(done, total int) {
	if !isTerminal(w) {
		return nil
	}
	p := phaseProgress(w, true)
	return func(done, total int) { p(phase, done, total) }
}

// buildVersion describes this binary (module version and VCS revision)
// and the date of its commit, which dates the bundle: never the clock.
func buildVersion() (version, date string) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "", ""
	}
	version = bi.Main.Version
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if rev := settings["vcs.revision"]; rev != "" {
		version += " " + rev
		if settings["vcs.modified"] == "true" {
			version += "+modified"
		}
	}
	if t, err := time.Parse(time.RFC3339, settings["vcs.time"]); err == nil {
		date = t.UTC().Format(time.DateOnly)
	}
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			date = time.Unix(n, 0).UTC().Format(time.DateOnly)
		}
	}
	return version, date
}

// noOverrides refuses THV_* variables that override a key of the
// protocol (THV_SETTINGS_D3_T=300 overrides settings.d3.T): a bundle's
// protocol is its params file, and its check must not depend on the
// environment of whoever runs it.
func noOverrides(params []byte) error {
	var top map[string]any
	if err := yaml.Unmarshal(params, &top); err != nil {
		return nil // LoadConfig reports it, better
	}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		for key := range top {
			prefix := "THV_" + strings.NewReplacer(".", "_", "-", "_", "+", "PLUS").Replace(strings.ToUpper(key))
			if v != "" && (k == prefix || strings.HasPrefix(k, prefix+"_")) {
				return fmt.Errorf("%s is set: it overrides the protocol's %s, and a bundle's protocol is its params file; unset it (or write the value into a params file)", k, key)
			}
		}
	}
	return nil
}

// maxBundleBytes bounds the bundle file verify-bundle reads: far above the
// paper's (120 MB), far below what a disk holds.
const maxBundleBytes = 64 << 30

func newVerifyBundleCommand() *cobra.Command {
	var ef executorFlags
	var vf verifyFlags
	var dir string
	var useBinary, jsonOut bool
	var maxUnpacked byteSize
	cmd := &cobra.Command{
		Use:   "verify-bundle FILE [--sample N] [--executor process|local|container]",
		Short: "Check a bundle: its manifest, its store, and every task re-executed bit for bit by this thv",
		Long: `Check a bundle written by thv bundle. This thv trusts its own build and what
it computes; nothing in the bundle vouches for itself (not its manifest,
its crate, its lock, a seal, its index or its binary):

 1. the archive is read defensively (absolute paths, .., links, devices,
    sparse files, duplicate names and oversized entries are refused,
    naming the entry) and every file is checked against SHA256SUMS as it
    is extracted, into a temporary directory (or --dir DIR, a new
    directory, kept);
 2. the RO-Crate's digests agree with the manifest, and results/ is what
    the store's tables and figures outputs are;
 3. as thv verify, in the extracted directory: every object of the
    bundle's store is re-hashed, every lock record compared with the
    store's index entry for its key, and every task of the lock
    re-executed from the bundle's own inputs, each in a worker process
    under a time and a memory ceiling, every output re-hashed and compared
    with the lock's. --sample N re-executes a random sample instead: a
    partial check, and it says so.

The verdict names the protocol the bundle's results are of (the paper's,
or the values that differ from the paper's), lists what was checked and
what was not (and why), and gives the results' headline against the
paper. Exit status: 0 verified; 1 rejected; 2 a wrong command line or a
missing bundle file; 3 not checked (this machine failed, or this thv runs
other code than the bundle's); 4 a sample agreed (--sample); 130 or 143
interrupted. --json prints the same as one object.

This thv must compute the same keys as the one that made the bundle (the
same code): otherwise it says so. Then build thv from the bundle's
source/ (after reviewing it: a thv built from a bundle's source checks the
bundle against that source) and run that. The bundle's own binary is never
run.`,
		Example: `  thv verify-bundle paper.tar.gz                 # every task re-executed
  thv verify-bundle paper.tar.gz -j 2 --task-timeout 5m
  thv verify-bundle paper.tar.gz --sample 100    # a random partial check
  thv verify-bundle paper.tar.gz --json | jq .outcome`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if useBinary {
				return usageError(errors.New("--use-bundle-binary was removed: a bundle's own thv would run a forger's code on this machine, and a forger's binary agrees with its forgery, so its verdict proves nothing; " +
					"build thv from the bundle's source/ instead (thv verify-bundle FILE --dir DIR; review DIR/source, then " + rebuildIn("DIR") + ") and verify with that build"))
			}
			out, errw := cmd.OutOrStdout(), cmd.ErrOrStderr()
			text := out
			if jsonOut {
				text = errw // stdout is the JSON object alone
			}
			c := bundleCheck{file: args[0], dir: dir, maxUnpacked: int64(maxUnpacked)}
			err := c.run(cmd, &ef, &vf, text)
			sampled := c.opt.Sample > 0
			if jsonOut {
				j := newCheckJSON("verify-bundle", c.proto)
				j.Bundle = args[0]
				j.addReport(c.rep, c.opt.Sample, c.opt.Seed)
				j.Against, j.Items, j.RunBlock = c.against, c.items, runBlockOf(c.run_)
				if err == nil {
					j.Message = c.verdict
				}
				if err := j.finish(cmd.Context(), out, err, sampled); err != nil {
					return err
				}
			}
			if err == nil && sampled {
				return sampleAgreed
			}
			return err
		},
	}
	ef.register(cmd)
	vf.register(cmd)
	cmd.Flags().StringVar(&dir, "dir", "", "extract into this new directory and keep it (default: a temporary one, removed)")
	cmd.Flags().Var(&maxUnpacked, "max-unpacked", fmt.Sprintf("the most the bundle may unpack to, e.g. 2GiB (default: %d times its compressed size, at least %d MiB)", bundle.TotalRatio, bundle.MinTotal>>20))
	cmd.Flags().BoolVar(&useBinary, "use-bundle-binary", false, "removed: a bundle's own binary is never run")
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print one JSON object (outcome, exit status, protocol, what was checked and not, counts per kind, the run block as stated); the report goes to stderr")
	cmd.Flags().MarkHidden("use-bundle-binary")
	return cmd
}

// bundleCheck is one thv verify-bundle: what it found, for its text and
// its JSON.
type bundleCheck struct {
	file, dir   string
	maxUnpacked int64
	opt         pipeline.VerifyOptions
	proto       *compare.Protocol
	rep         *pipeline.VerifyReport
	items       checkList
	run_        *report.Run // the page's run block, as stated
	against     string      // the results' headline against the paper
	verdict     string      // the last line, when verified
}

// run checks the bundle, writing its report to text; the error says why
// it is not verified, classified (rejected, not checked, usage).
func (c *bundleCheck) run(cmd *cobra.Command, ef *executorFlags, vf *verifyFlags, text io.Writer) error {
	file := terminalText(c.file)
	var err error
	if c.opt, err = vf.options(cmd); err != nil {
		return usageError(err)
	}
	dir := c.dir
	if dir == "" {
		tmp, err := tempdir.New("thv-verify-bundle-")
		if err != nil {
			return notChecked(err)
		}
		defer tmp.Remove()
		dir = filepath.Join(tmp.Path(), "bundle")
	}
	// A bundle must be a regular file: a FIFO or a device would
	// block or never end. Its size bounds what it may unpack to.
	f, err := userfile.Open(c.file, maxBundleBytes)
	if err != nil {
		return usageError(err)
	}
	fi, err := os.Stat(c.file)
	if err != nil {
		f.Close()
		return usageError(err)
	}
	manifest, err := bundle.Extract(f, dir, bundle.Limits{Total: c.maxUnpacked, Compressed: fi.Size(), RaiseTotal: "--max-unpacked SIZE"})
	f.Close()
	if errors.Is(err, bundle.ErrLocal) {
		return notChecked(fmt.Errorf("%s not checked: %w", file, err)) // this machine's fault, not the bundle's
	}
	if err != nil {
		return rejected(fmt.Errorf("%s rejected: %w", file, err))
	}
	fmt.Fprintf(text, "manifest: %d files, every SHA-256 agrees with %s\n", len(manifest), bundle.ManifestName)
	c.items.checked(bundle.ManifestName, fmt.Sprintf("%d files, each extracted defensively and its SHA-256 compared", len(manifest)))
	if _, ok := manifest[bundle.ImagePath]; ok {
		fmt.Fprintf(text, "%s: not checked and never run (a bundle's own binary is evidence for nothing: this thv re-executes with its own build)\n", bundle.ImagePath)
		c.items.notChecked(bundle.ImagePath, "never run: a bundle's own binary is evidence for nothing; this thv re-executes with its own build")
	}
	params, lockName, err := manifest.Protocol()
	if err != nil {
		return rejected(fmt.Errorf("%s rejected: %w", file, err))
	}
	if err := bundle.CheckLockSize(dir, lockName); err != nil {
		return rejected(fmt.Errorf("%s rejected: %w", file, err))
	}
	lock, err := pipeline.ReadLock(filepath.Join(dir, lockName))
	if err != nil {
		return rejected(fmt.Errorf("%s rejected: %w", file, err))
	}
	sourceChecks, err := checkBundleSource(dir, lock)
	if err != nil {
		return rejected(fmt.Errorf("%s rejected: %w: a thv built from it would not compute the lock's keys", file, err))
	}
	protocolData, err := os.ReadFile(filepath.Join(dir, params))
	if err != nil {
		return notChecked(err)
	}
	if err := noOverrides(protocolData); err != nil {
		return usageError(err)
	}
	proj, err := protocol.Open(protocol.Options{
		LoadOptions: protocol.LoadOptions{ParamsFile: filepath.Join(dir, params), Profile: lock.Profile},
		StoreDir:    filepath.Join(dir, bundle.StoreDir),
		Dir:         dir,
	})
	if err != nil {
		return rejected(fmt.Errorf("%s rejected: its protocol: %w", file, err))
	}
	// The protocol is untrusted: a path it names must stay in the
	// bundle (verify-bundle writes nothing there, but reads what thv
	// readings left in it).
	if r := proj.Config.Outputs.Results; !filepath.IsLocal(r) {
		return rejected(fmt.Errorf("%s rejected: its protocol's outputs.results %q leaves the bundle's directory", file, r))
	}
	d, err := proj.Describe()
	if err != nil {
		return notChecked(err)
	}
	c.proto = &d
	fmt.Fprintf(text, "protocol: %s\n", terminalText(d.Name()))
	// Every record is read from the bundle's index: a seal in its
	// store is the bundle's word about itself.
	proj.IgnoreSeal = true
	if got := filepath.Base(proj.LockPath); got != lockName {
		return rejected(fmt.Errorf("%s rejected: its lock is %s, but its protocol %s with profile %s names %s", file, terminalText(lockName), terminalText(params), terminalText(lock.Profile), terminalText(got)))
	}
	status, err := proj.Status(cmd.Context())
	if err != nil {
		return notChecked(err)
	}
	for _, r := range status.Results {
		if r.Status == pipeline.Cached || r.Dispute != nil {
			continue // a dispute is reported, and settled, by Verify
		}
		if strings.Contains(r.Reason, "code changed") {
			return notChecked(fmt.Errorf("this thv was built from other code than the bundle's thv (task %s: %s), so it computes other keys and cannot check the bundle's artifacts; "+
				"the bundle's source/ is the code its lock records, so it is this thv's code that differs: "+
				"build thv from the bundle's source/ (thv verify-bundle FILE --dir DIR; review DIR/source, then %s) and verify with that build", terminalText(r.Task.ID), terminalText(r.Reason), rebuildIn("DIR")))
		}
		if r.Status == pipeline.Waiting && len(status.Disputes) > 0 {
			continue // downstream of a dispute
		}
		return rejected(fmt.Errorf("%s rejected: task %s is not up to date in the bundle's own store (%s%s): the bundle is not self-consistent", file, terminalText(r.Task.ID), r.Status, terminalText(reasonText(r.Reason))))
	}
	contents, err := checkBundleContents(proj, status, dir, manifest, params)
	if err != nil {
		return rejected(fmt.Errorf("%s rejected: %w", file, err))
	}
	if len(status.Disputes) == 0 {
		notes, run, err := resultsAgree(proj, status, dir)
		if err != nil {
			return rejected(fmt.Errorf("%s rejected: %w", file, err))
		}
		c.run_ = run
		fmt.Fprintf(text, "results: every file of results/ is the store's output, or drawn from one\n")
		for _, n := range notes {
			fmt.Fprintf(text, "  %s\n", terminalText(n))
		}
		c.items.checked("results/", "every file the store's output, drawn from one (a figure's PNG), or the page those outputs give")
		if run != nil {
			c.items.notChecked("results/"+protocol.ReportName+"'s run block", runBlockText(*run))
		}
		for _, name := range protocol.ReadingsFiles {
			if _, ok := manifest[bundle.ResultsDir+"/"+name]; ok {
				c.items.notChecked(bundle.ResultsDir+"/"+name, "thv readings' output: the bundle holds its table, not its tasks, so the judgement across instances is the author's word")
			}
		}
	}
	if c.opt.NewExecutor, err = ef.verifier(proj); err != nil {
		return usageError(err)
	}
	vf.printSample(text, c.opt, "thv verify-bundle "+file)
	errw := cmd.ErrOrStderr()
	c.opt.Progress = phaseProgress(errw, isTerminal(errw))
	rep, err := proj.Verify(cmd.Context(), c.opt)
	if err != nil {
		return notChecked(err)
	}
	c.rep = rep
	printVerify(text, rep, false, d.ShortName(3))
	if !rep.OK() {
		switch {
		case len(rep.Store.Problems) > 0:
			first := rep.Store.Problems[0].String()
			if len(rep.Damaged) > 0 {
				first = "task " + rep.Damaged[0].String()
			}
			return rejected(fmt.Errorf("%s rejected: its store failed the check (%d problems); first: %s", file, len(rep.Store.Problems), terminalText(first)))
		case len(rep.Disputes) > 0:
			return rejected(fmt.Errorf("%s rejected: %d of its lock records disagree with its store's index; first: %s", file, len(rep.Disputes), terminalText(rep.Disputes[0].String())))
		}
		return rejected(fmt.Errorf("%s rejected: %d tasks did not reproduce; first: %s", file, countTasks(rep.Mismatches), terminalText(rep.Mismatches[0].String())))
	}
	c.items.add(contents...)
	c.items.add(sourceChecks...)
	c.items.checked(bundle.StoreDir+"/", "every object re-hashed, every index entry resolved")
	c.items.checked(lockName, "every record compared with the store's index entry for its key")
	if rep.Complete() {
		c.items.checked("every task", fmt.Sprintf("all %d re-executed by this thv from the bundle's recorded inputs, every output identical to the lock's", rep.Tasks()))
	} else {
		c.items.notChecked("every task", sampleVerdict(rep))
	}
	proj.Config.Outputs.Results = filepath.Join(dir, bundle.ResultsDir) // its readings' table, as the page read it
	if v, ok, err := proj.Verdict(status); err == nil && ok {
		c.against = verdictLine(v, true)
	}
	c.items.print(text)
	if c.against != "" {
		fmt.Fprintf(text, "against the paper: %s\n", terminalText(c.against))
	}
	if !rep.Complete() {
		fmt.Fprintf(text, "bundle NOT verified: %s\n", sampleVerdict(rep))
		return nil
	}
	c.verdict = fmt.Sprintf("bundle verified: this thv re-executed all %d tasks of %s (%s) from its recorded inputs and got the lock's bytes for every output; its results/ are those outputs",
		rep.Tasks(), file, terminalText(d.ShortName(3)))
	fmt.Fprintln(text, c.verdict)
	return nil
}

func reasonText(r string) string {
	if r == "" {
		return ""
	}
	return ": " + r
}

// resultsAgree exports the results from the bundle's store and compares
// them with the bundle's results/ (bundle.CheckResults), file by file as
// protocol.SameResult does: copies of store objects byte for byte, the
// figures' PNGs, drawn at export on whatever CPU wrote the bundle, through
// the curves they name and their pixels. It returns a note per PNG drawn
// elsewhere.
func resultsAgree(proj *protocol.Project, status *pipeline.Report, dir string) (notes []string, run *report.Run, err error) {
	freshDir, err := tempdir.New("thv-verify-bundle-results-")
	if err != nil {
		return nil, nil, err
	}
	defer freshDir.Remove()
	fresh := freshDir.Path()
	// What thv readings wrote, the bundle's as it is (its tasks are not in
	// the bundle): the page is rendered with it, as the author's was.
	if err := copyReadings(filepath.Join(dir, bundle.ResultsDir), fresh); err != nil {
		return nil, nil, err
	}
	proj.Config.Outputs.Results = fresh
	if _, err := proj.ExportResults(status); err != nil {
		return nil, nil, err
	}
	notes, err = bundle.CheckResults(dir, fresh, protocol.SameResult)
	if err != nil {
		return nil, nil, err
	}
	page, err := os.ReadFile(filepath.Join(dir, bundle.ResultsDir, protocol.ReportName))
	if err == nil {
		if r, err := report.ParseRun(page); err == nil {
			run = &r
		}
	}
	return notes, run, nil
}

// copyReadings copies the files thv readings writes into results/ from
// the directory from to the directory to, those that are there.
func copyReadings(from, to string) error {
	for _, name := range protocol.ReadingsFiles {
		b, err := userfile.ReadFile(filepath.Join(from, name), maxReadingsBytes)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("results/%s: %w", name, err)
		}
		if err := artifacts.WriteFileAtomic(filepath.Join(to, name), b); err != nil {
			return err
		}
	}
	return nil
}

// maxReadingsBytes bounds a file of thv readings read from a bundle: the
// paper's sweep writes tens of kilobytes.
const maxReadingsBytes = 16 << 20
