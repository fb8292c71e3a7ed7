package protocol

import (
	"io/fs"
	"strings"
	"sync"

	"thv"
	"thv/artifacts"
	"thv/pipeline"
	"thv/pipeline/codeid"
	"thv/stages/benchmark"
	"thv/stages/collect"
	"thv/stages/compare"
	"thv/stages/etaselect"
	"thv/stages/figures"
	"thv/stages/instance"
	"thv/stages/run"
	"thv/stages/stage"
	"thv/stages/summarize"
	"thv/stages/tables"
)

// kindList is the paper's stage kinds: their names, functions and what
// each declares it reads and writes. The code a kind runs is derived from
// its Run function: the declarations Run can reach.
var kindList = []pipeline.Kind{
	kind(instance.Kind, instance.Run, instance.Declared),
	kind(benchmark.Kind, benchmark.Run, benchmark.Declared),
	kind(run.Kind, run.Run, run.Declared),
	kind(etaselect.Kind, etaselect.Run, etaselect.Declared),
	kind(collect.Kind, collect.Run, collect.Declared),
	kind(summarize.Kind, summarize.Run, summarize.Declared),
	kind(figures.Kind, figures.Run, figures.Declared),
	kind(tables.Kind, tables.Run, tables.Declared),
	kind(compare.Kind, compare.Run, compare.Declared),
}

// declared is every kind's declaration, by kind name.
var declared = map[string]stage.Declaration{}

// kind is the registration of a kind with its declaration.
func kind(name string, run pipeline.Func, d stage.Declaration) pipeline.Kind {
	declared[name] = d
	k := pipeline.Kind{Name: name, Run: run, Reads: []string{}, Outputs: []string{}}
	for _, r := range d.Reads {
		k.Reads = append(k.Reads, string(r))
	}
	for _, o := range d.Outputs {
		k.Outputs = append(k.Outputs, string(o.Name))
	}
	return k
}

// Declared returns what the kind called name declares it reads and
// writes: the export copies to results/ the outputs it declares there,
// and the page and thv show say what each holds.
func Declared(name string) (stage.Declaration, bool) {
	d, ok := declared[name]
	return d, ok
}

// Kinds returns the stage kinds of the paper's pipeline with the code
// identity of this binary: each kind's code is the declarations its Run
// function can reach (derived, never listed: pipeline/codeid), computed
// from the sources embedded in the binary.
func Kinds() (*pipeline.Kinds, error) { return binaryKinds() }

var binaryKinds = sync.OnceValues(func() (*pipeline.Kinds, error) { return newKinds(thv.Sources, true) })

// KindsFrom is Kinds with the code identity computed from other sources
// (tests use it to see what an edit would rerun).
func KindsFrom(sources fs.FS) (*pipeline.Kinds, error) { return newKinds(sources, false) }

// newKinds is KindsFrom; embedded says sources are the binary's own
// (codeid.Config.SourcesInBinary).
func newKinds(sources fs.FS, embedded bool) (*pipeline.Kinds, error) {
	c, err := codeConfig(sources)
	if err != nil {
		return nil, err
	}
	c.SourcesInBinary = embedded
	return pipeline.NewKinds(codeid.New(c), kindList...)
}

// codeConfig is the code identities' configuration over sources, with
// this binary's modules.
func codeConfig(sources fs.FS) (codeid.Config, error) {
	c, err := codeid.BinaryConfig(sources, thv.ThirdParty, thv.ThirdPartyNames, codeHints)
	if err != nil {
		return c, err
	}
	// A build from a bundle's vendored source/ records no module hashes:
	// they are go.sum's, as compiled in.
	gosum, err := fs.ReadFile(thv.Module, "go.sum")
	if err != nil {
		return c, err
	}
	c.Modules = codeid.WithGoSumHashes(c.Modules, gosum)
	return c, nil
}

// codeHints are this module's fixes for what a code identity's errors
// call for: how thv is built, and how its third-party table is
// regenerated (the root package's test writes it).
var codeHints = codeid.Hints{
	Build:            "go build ./cmd/thv",
	UpdateThirdParty: "go test . -run TestThirdPartyTable -update (in the module root)",
}

// CodeFingerprint is the fingerprint of this binary's code, as a no-op
// certificate is keyed by it (codeid's: the module's sources embedded in
// the binary, its modules, the toolchain and the binary's build ID), for
// thv --version.
func CodeFingerprint() (string, error) {
	c, err := codeConfig(thv.Sources)
	if err != nil {
		return "", err
	}
	c.SourcesInBinary = true
	return codeid.New(c).Fingerprint()
}

// An OutputDoc is an output of a task with what its kind declares it
// holds.
type OutputDoc struct {
	Task, Name, Doc string
	Digest          artifacts.Digest
}

// Outputs lists the outputs of rep's up-to-date tasks whose ID contains
// filter, each with what its kind's declaration says of it: thv show
// outputs, for any kind.
func Outputs(rep *pipeline.Report, filter string) []OutputDoc {
	var out []OutputDoc
	for _, r := range rep.Results {
		if !strings.Contains(r.Task.ID, filter) || (r.Status != pipeline.Cached && r.Status != pipeline.Executed) {
			continue
		}
		d := declared[r.Task.Kind]
		for _, o := range r.Outputs {
			decl, _ := d.Output(o.Name)
			out = append(out, OutputDoc{Task: r.Task.ID, Name: o.Name, Doc: decl.DocOf(o.Name), Digest: o.Digest})
		}
	}
	return out
}
