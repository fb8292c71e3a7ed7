package protocol

import (
	"strconv"

	"thv/algos"
	"thv/envs"
	"thv/stages/compare"
)

// The IDs of the protocol's tasks: the plan names its tasks with these,
// and every command that reads a task's outputs finds it by them.
const (
	// TablesID is the task of the LaTeX tables over every setting.
	TablesID = "tables"
	// CompareID is the task of the comparison with the paper's published
	// values.
	CompareID = "compare"
)

// InstanceID is the task that draws the instance of a setting and
// geometry from seed.
func InstanceID(setting, geometry string, seed uint64) string {
	return "instance/" + setting + "/" + geometry + "/seed=" + strconv.FormatUint(seed, 10)
}

// BenchmarkID is the task of the benchmarks (V*, HV(G*)) of
// InstanceID(setting, geometry, seed).
func BenchmarkID(setting, geometry string, seed uint64) string {
	return "benchmark/" + setting + "/" + geometry + "/seed=" + strconv.FormatUint(seed, 10)
}

// RunID is the task of one bandit run of algo at η = eta (0 for an
// algorithm without η) with seed.
func RunID(setting, geometry, algo string, eta float64, seed uint64) string {
	return "run/" + setting + "/" + geometry + "/" + algo + "/eta=" + strconv.FormatFloat(eta, 'g', -1, 64) + "/seed=" + strconv.FormatUint(seed, 10)
}

// FigureRunID is the task of the run RunID(setting, geometry, algo, eta,
// seed) that also keeps its trajectory, for a figure
// (outputs.trajectories = figures).
func FigureRunID(setting, geometry, algo string, eta float64, seed uint64) string {
	return RunID(setting, geometry, algo, eta, seed) + "/trajectory"
}

// SelectID is the task that selects algo's η* on a setting and geometry.
func SelectID(setting, geometry, algo string) string {
	return "select/" + setting + "/" + geometry + "/" + algo
}

// CollectID is the task that collects algo's final runs (at η*) on a
// setting and geometry: its output collect.Final holds one summary per
// seed.
func CollectID(setting, geometry, algo string) string {
	return "collect/" + setting + "/" + geometry + "/" + algo
}

// SummarizeID is the task of a setting's statistics: its outputs
// summarize.Cells and summarize.Tests.
func SummarizeID(setting string) string { return "summarize/" + setting }

// FiguresID is the task of a setting's trajectory figure.
func FiguresID(setting string) string { return "figures/" + setting }

// Vocabulary is every name a reference of published values may use: the
// algorithms registered in this binary (also those the protocol does not
// run, whose values are reported missing) and the geometries envs
// generates (envs.Geometries, the one list of them), both in the paper's
// order (algorithms not in the paper after the paper's, by name: algos.All).
func Vocabulary() compare.Vocabulary {
	var v compare.Vocabulary
	for _, s := range algos.All() {
		v.Algorithms = append(v.Algorithms, s.Name)
	}
	for _, g := range envs.Geometries {
		v.Geometries = append(v.Geometries, string(g))
	}
	return v
}

// ParseReference reads a reference file of published values with the
// protocol's Vocabulary (compare.ParseReference).
func ParseReference(b []byte) (*compare.Reference, error) {
	return compare.ParseReference(b, Vocabulary())
}
