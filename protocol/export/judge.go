package export

import (
	"thv/pipeline"
	"thv/protocol"
	"thv/protocol/config"
	"thv/stages/compare"
	"thv/stages/formats"
)

// A Judgement is the project's results judged against a reference of
// published values and claims (thv compare): every value and claim, the
// Markdown report and the headline verdict.
type Judgement struct {
	Rows    []formats.Comparison
	Claims  []formats.ClaimCheck
	Report  string
	Verdict compare.Verdict
}

// Judge judges rep's up-to-date results: against the paper's reference,
// as the compare task did (ref nil), or against ref, in process with the
// compare stage's functions on the same inputs. A reference of one's own
// states no protocol: its values are judged whatever this protocol's
// settings (what makes a value not comparable is a difference from the
// paper's protocol, which its values need not be of).
func (p *Project) Judge(rep *pipeline.Report, ref *compare.Reference) (*Judgement, error) {
	var j Judgement
	var err error
	if ref == nil {
		if j.Rows, j.Claims, err = p.Comparison(rep); err != nil {
			return nil, err
		}
		if j.Verdict, _, err = p.Verdict(rep); err != nil {
			return nil, err
		}
		b, err := p.ReadOutput(rep, protocol.CompareID, compare.Report)
		j.Report = string(b)
		return &j, err
	}
	fixed := p.Config.Instances.Mode == config.InstancesFixed
	if fixed {
		one := ref.OneInstance() // as the compare stage judges it
		ref = &one
	}
	proto, err := p.Describe()
	if err != nil {
		return nil, err
	}
	proto.NotComparable, proto.Seeds, proto.PaperSeeds = nil, 0, 0
	if j.Rows, j.Claims, err = p.CompareWith(rep, ref, proto); err != nil {
		return nil, err
	}
	j.Report = compare.Markdown(ref, proto, j.Rows, j.Claims)
	j.Verdict = compare.Verdict{Protocol: proto, Run: compare.Count(j.Rows, j.Claims), OneInstance: fixed,
		Relative: ref.Tolerance.Relative, Band: ref.Tolerance.Percentile}
	return &j, nil
}
