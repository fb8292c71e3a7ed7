package protocol

import (
	"thv/pipeline"
	"thv/stages/collect"
	"thv/stages/compare"
	"thv/stages/formats"
	"thv/stages/summarize"
)

// What a pass's up-to-date tasks computed, read back from the store by
// the commands and the readings sweep.

// Comparison reads the outputs of the up-to-date compare task of rep:
// the published values judged and the claims checked.
func (p *Project) Comparison(rep *pipeline.Report) ([]formats.Comparison, []formats.ClaimCheck, error) {
	b, err := p.ReadOutput(rep, CompareID, compare.Comparison)
	if err != nil {
		return nil, nil, err
	}
	rows, err := formats.DecodeComparisons(b)
	if err != nil {
		return nil, nil, err
	}
	if b, err = p.ReadOutput(rep, CompareID, compare.Claims); err != nil {
		return nil, nil, err
	}
	claims, err := formats.DecodeClaims(b)
	return rows, claims, err
}

// Cells reads the cells of every setting's up-to-date summarize task.
func (p *Project) Cells(rep *pipeline.Report) (compare.Results, error) {
	res := compare.Results{}
	for _, s := range p.Config.SortedSettings() {
		b, err := p.ReadOutput(rep, SummarizeID(s.Name), summarize.Cells)
		if err != nil {
			return nil, err
		}
		if res[s.Name], err = formats.DecodeCells(b); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// CompareWith compares the up-to-date results with another reference, in
// process: the same functions as the compare stage, on the same inputs.
func (p *Project) CompareWith(rep *pipeline.Report, ref *compare.Reference, proto compare.Protocol) ([]formats.Comparison, []formats.ClaimCheck, error) {
	res, err := p.Cells(rep)
	if err != nil {
		return nil, nil, err
	}
	finals := map[string][]formats.Summary{}
	for _, c := range ref.Rows {
		b, ok, err := p.Output(rep, CollectID(c.Setting, c.Geometry, c.Algorithm), collect.Final)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			continue
		}
		if finals[compare.FinalInputName(c.Setting, c.Geometry, c.Algorithm)], err = formats.DecodeSummaries(b); err != nil {
			return nil, nil, err
		}
	}
	regret := p.Config.Metrics.FinalRegret
	return compare.Compare(ref, proto, res, finals, regret), compare.CheckClaims(ref.Claims, proto, res, regret, Vocabulary().Geometries), nil
}

// TaskKey is the key of task id in rep ("" if it has none).
func TaskKey(rep *pipeline.Report, id string) string {
	for _, r := range rep.Results {
		if r.Task.ID == id {
			return r.Key.String()
		}
	}
	return ""
}
