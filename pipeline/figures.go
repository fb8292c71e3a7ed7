package pipeline

import (
	"fmt"

	"thv/algos"
	"thv/stages"
)

// addFigure adds the trajectory figure of setting s. Which algorithms it
// draws (THV-UCB and the best of each other learning family, per geometry)
// is known only from the statistics, so the task waits for sum and then
// depends on the trajectories of those algorithms' final runs.
func (p *Plan) addFigure(s Setting, sum *Task) {
	f := &Task{ID: "figures/" + s.Name, Kind: "figures", Trigger: sum, TriggerOutput: "cells", Setting: s.Name}
	f.Expand = func(p *Plan, cellsBlob []byte) error {
		cells, err := stages.DecodeCells(cellsBlob)
		if err != nil {
			return fmt.Errorf("%s: %w", f.ID, err)
		}
		cfg := p.Config
		params := stages.FiguresParams{
			Setting: stages.SettingInfo{Name: s.Name, D: s.D, N: s.N, K: s.K, T: s.T, Sigma: s.Sigma, Seeds: len(cfg.Seeds)},
			Seeds:   cfg.Seeds, Window: cfg.Figures.MovingAverage, Confidence: cfg.Statistics.Confidence,
		}
		for _, g := range cfg.Geometries {
			panel := stages.FigurePanel{Geometry: g}
			for _, a := range bestPerFamily(cfg, cells, g) {
				panel.Algorithms = append(panel.Algorithms, a.Name)
				for _, seed := range cfg.Seeds {
					r, err := p.run(s, g, a.AlgoConfig, a.etaStar, seed)
					if err != nil {
						return err
					}
					f.Deps = append(f.Deps, Dep{Name: stages.TrajectoryInputName(g, a.Name, seed), From: r, Output: "trajectory"})
				}
			}
			params.Panels = append(params.Panels, panel)
		}
		f.Params = params
		f.Expand = nil
		return nil
	}
	p.add(f)
}

type chosenAlgo struct {
	AlgoConfig
	etaStar float64
}

// bestPerFamily returns the proposed method (first in paper order) and, for
// every other learning family, its algorithm of largest mean HV_last on
// geometry g (the first in paper order on ties). RandomK, which does not
// learn, is left out.
func bestPerFamily(cfg *Config, cells []stages.Cell, g string) []chosenAlgo {
	var out []chosenAlgo
	slot := map[string]int{} // family → index in out
	hvOf := map[string]float64{}
	for i, a := range cfg.SortedAlgorithms() {
		spec, _ := algos.Lookup(a.Name)
		var cell *stages.Cell
		for c := range cells {
			if cells[c].Geometry == g && cells[c].Algo == a.Name {
				cell = &cells[c]
			}
		}
		if cell == nil || spec.Family == "randomk" {
			continue
		}
		choice := chosenAlgo{a, cell.EtaStar}
		if i == 0 {
			out = append(out, choice)
			continue
		}
		j, seen := slot[spec.Family]
		switch {
		case !seen:
			slot[spec.Family] = len(out)
			hvOf[spec.Family] = cell.Mean[0]
			out = append(out, choice)
		case cell.Mean[0] > hvOf[spec.Family]:
			hvOf[spec.Family] = cell.Mean[0]
			out[j] = choice
		}
	}
	return out
}
