package protocol

import (
	"io/fs"
	"sync"

	"thv"
	"thv/pipeline"
	"thv/pipeline/codeid"
	"thv/stages/benchmark"
	"thv/stages/collect"
	"thv/stages/compare"
	"thv/stages/etaselect"
	"thv/stages/figures"
	"thv/stages/instance"
	"thv/stages/run"
	"thv/stages/summarize"
	"thv/stages/tables"
)

// kindList is the paper's stage kinds. Only names and functions: the code
// a kind runs is derived from the package that defines its Run function.
var kindList = []pipeline.Kind{
	{Name: instance.Kind, Run: instance.Run},
	{Name: benchmark.Kind, Run: benchmark.Run},
	{Name: run.Kind, Run: run.Run},
	{Name: etaselect.Kind, Run: etaselect.Run},
	{Name: collect.Kind, Run: collect.Run},
	{Name: summarize.Kind, Run: summarize.Run},
	{Name: figures.Kind, Run: figures.Run},
	{Name: tables.Kind, Run: tables.Run},
	{Name: compare.Kind, Run: compare.Run},
}

// Kinds returns the stage kinds of the paper's pipeline with the code
// identity of this binary: each kind's code is the import closure of the
// package that defines its Run function (derived, never listed), computed
// from the sources embedded in the binary.
func Kinds() (*pipeline.Kinds, error) { return binaryKinds() }

var binaryKinds = sync.OnceValues(func() (*pipeline.Kinds, error) { return newKinds(thv.Sources, true) })

// KindsFrom is Kinds with the code identity computed from other sources
// (tests use it to see what an edit would rerun).
func KindsFrom(sources fs.FS) (*pipeline.Kinds, error) { return newKinds(sources, false) }

// newKinds is KindsFrom; embedded says sources are the binary's own
// (codeid.Config.SourcesInBinary).
func newKinds(sources fs.FS, embedded bool) (*pipeline.Kinds, error) {
	c, err := codeid.BinaryConfig(sources, thv.ThirdParty, codeHints)
	if err != nil {
		return nil, err
	}
	// A build from a bundle's vendored source/ records no module hashes:
	// they are go.sum's, as compiled in.
	gosum, err := fs.ReadFile(thv.Module, "go.sum")
	if err != nil {
		return nil, err
	}
	c.Modules = codeid.WithGoSumHashes(c.Modules, gosum)
	c.SourcesInBinary = embedded
	return pipeline.NewKinds(codeid.New(c), kindList...)
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
	c, err := codeid.BinaryConfig(thv.Sources, thv.ThirdParty, codeHints)
	if err != nil {
		return "", err
	}
	c.SourcesInBinary = true
	return codeid.New(c).Fingerprint()
}
