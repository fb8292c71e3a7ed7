package protocol

import (
	"fmt"

	"thv/algos"
	"thv/pipeline"
	"thv/protocol/config"
	"thv/stages/figures"
	"thv/stages/formats"
	"thv/stages/run"
	"thv/stages/summarize"
)

// addFigure adds the trajectory figure of setting s. Which algorithms it
// draws (the proposed method and the best of each other learning family,
// per geometry)
// is known only from the statistics, so the task waits for sum and then
// depends on the trajectories of those algorithms' final runs: the runs
// that keep their trajectory, for the figure (figureRun).
func (p *planner) addFigure(s config.Setting, sum *pipeline.Task) {
	f := &pipeline.Task{ID: FiguresID(s.Name), Kind: figures.Kind, Trigger: sum, TriggerOutput: string(summarize.Cells)}
	f.Expand = func(_ *pipeline.Plan, cellsBlob []byte) error {
		cells, err := formats.DecodeCells(cellsBlob)
		if err != nil {
			return fmt.Errorf("reading the statistics of %s: %w", sum.ID, err)
		}
		cfg := p.cfg
		params := figures.Params{
			Setting: settingInfo(s, cfg),
			Seeds:   cfg.Seeds, Window: cfg.Figures.MovingAverage, Confidence: cfg.Statistics.Confidence,
		}
		for _, g := range cfg.Geometries {
			panel := figures.Panel{Geometry: g}
			for _, a := range bestPerFamily(cfg, cells, g) {
				panel.Algorithms = append(panel.Algorithms, a.Name)
				for _, seed := range cfg.Seeds {
					r, err := p.figureRun(s, g, a.AlgoConfig, a.etaStar, seed)
					if err != nil {
						return err
					}
					f.Deps = append(f.Deps, dep(figures.TrajectoryInputName(g, a.Name, seed), r, run.Trajectory))
				}
			}
			params.Panels = append(params.Panels, panel)
		}
		f.Params = params
		return nil
	}
	p.plan.Add(f)
}

type chosenAlgo struct {
	config.AlgoConfig
	etaStar float64
}

// bestPerFamily returns the proposed method (config.Config.Proposed) and, for
// every other learning family, its algorithm of largest mean HV_last on
// geometry g (the first in SortedAlgorithms' order on ties). Algorithms that do not
// learn (RandomK) are left out.
func bestPerFamily(cfg *config.Config, cells []formats.Cell, g string) []chosenAlgo {
	var out []chosenAlgo
	slot := map[string]int{} // family → index in out
	hvOf := map[string]float64{}
	proposed := cfg.Proposed()
	for _, a := range cfg.SortedAlgorithms() {
		spec, _ := algos.Lookup(a.Name)
		cell, ok := formats.CellOf(cells, g, a.Name)
		if !ok || !spec.Learns {
			continue
		}
		choice := chosenAlgo{a, cell.EtaStar}
		if a.Name == proposed {
			out = append(out, choice)
			continue
		}
		j, seen := slot[spec.Family]
		switch {
		case !seen:
			slot[spec.Family] = len(out)
			hvOf[spec.Family] = cell.HVLast.Mean
			out = append(out, choice)
		case cell.HVLast.Mean > hvOf[spec.Family]:
			hvOf[spec.Family] = cell.HVLast.Mean
			out[j] = choice
		}
	}
	return out
}
