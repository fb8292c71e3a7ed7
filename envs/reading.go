package envs

import (
	"fmt"
	"slices"
)

// Reading is how the generator reads the points of the paper's Synthetic
// Environments section that its text leaves open (docs/fidelity.md). The
// zero Reading is the default: every field empty means its first value.
// Each field names a reading the text admits; none is a tuning knob.
type Reading struct {
	// Order of the arms: "shuffled" (default) puts front arms and
	// distractors in a random order; "generated" keeps the order the text
	// describes them in, the n_front front arms first, then the distractors.
	Order string `json:"order,omitempty"`
	// ClusterSplit assigns the clusters front's arms to its two angular
	// regions: "halves" (default) the first ⌈n_front/2⌉ to cluster 1, the
	// rest to cluster 2; "random" each arm to either region with
	// probability 1/2.
	ClusterSplit string `json:"clusters_split,omitempty"`
	// Distractors: "uniform" (default) samples each uniformly in
	// [0, 0.3]^d, as printed; "dominated" resamples a draw until a front
	// arm strictly dominates it ("strictly dominated points").
	Distractors string `json:"distractors,omitempty"`
}

// The values of each Reading field; the first of each is the default.
var (
	ArmOrders       = []string{"shuffled", "generated"}
	ClusterSplits   = []string{"halves", "random"}
	DistractorDraws = []string{"uniform", "dominated"}
)

// Normalize fills empty fields with their defaults and checks every value.
func (r Reading) Normalize() (Reading, error) {
	for _, f := range []struct {
		name    string
		value   *string
		allowed []string
	}{
		{"order", &r.Order, ArmOrders},
		{"clusters_split", &r.ClusterSplit, ClusterSplits},
		{"distractors", &r.Distractors, DistractorDraws},
	} {
		if *f.value == "" {
			*f.value = f.allowed[0]
			continue
		}
		if !slices.Contains(f.allowed, *f.value) {
			return r, fmt.Errorf("%s = %q: want one of %v", f.name, *f.value, f.allowed)
		}
	}
	return r, nil
}
