package render

import (
	"cmp"
	"errors"
	"fmt"
	"math"
)

// maxPlotPoints bounds the number of points drawn per line (and per band
// edge); see the package doc.
const maxPlotPoints = 1000

// Series is one algorithm's trajectories over seeds: HV[s][t] is HV(S_t) of
// seed s at round t+1 (all seeds same length).
type Series struct {
	Name string
	HV   [][]float64
}

// Panel is one geometry's trajectories, the series to highlight first.
type Panel struct {
	Title  string
	Series []Series
}

// Curve is one series as drawn: at each drawn round (increasing, from 1),
// the moving average of the per-round mean over seeds (the line) and of
// the per-round CI bounds of that mean (the band).
type Curve struct {
	Name         string
	Rounds       []int
	Mean, Lo, Hi []float64
}

// PanelCurves is one panel as drawn: its title and its curves in the
// order of its series (the first is highlighted).
type PanelCurves struct {
	Title  string
	Curves []Curve
}

// CurveOptions configures Curves. Zero values take the defaults noted.
type CurveOptions struct {
	Window int     // moving average window w (0 → 50)
	Level  float64 // CI level (0 → 0.95)
}

// Defaults of CurveOptions.
const (
	DefaultFigureWindow = 50
	DefaultFigureLevel  = 0.95
)

// Curves computes what a figure draws from the trajectories: per panel and
// series, the moving average (window w, over rounds t−w+1..t; for t < w the
// rounds available) of the per-round mean over seeds and of the per-round
// CI bounds of the mean (Student t, n−1 dof, [MeanCIBand]), at full
// resolution, then kept at the drawn rounds (every ⌈T/maxPlotPoints⌉-th
// round plus rounds 1 and T). It is the hashed half of a figure: [Draw]
// only plots its result.
//
// Errors: no panel, a panel without series, a series without seeds or
// rounds, ragged seeds, non-finite HV values, duplicate or empty series
// names in a panel, invalid options.
func Curves(panels []Panel, opt CurveOptions) ([]PanelCurves, error) {
	opt.Window, opt.Level = cmp.Or(opt.Window, DefaultFigureWindow), cmp.Or(opt.Level, DefaultFigureLevel)
	switch {
	case opt.Window < 1:
		return nil, fmt.Errorf("render curves: window %d < 1", opt.Window)
	case !(opt.Level > 0 && opt.Level < 1):
		return nil, fmt.Errorf("render curves: CI level %v not in (0, 1)", opt.Level)
	case len(panels) == 0:
		return nil, errors.New("render curves: no panel")
	}
	out := make([]PanelCurves, len(panels))
	for p, pan := range panels {
		if len(pan.Series) == 0 {
			return nil, fmt.Errorf("render curves: panel %d (%q) has no series", p, pan.Title)
		}
		out[p].Title = pan.Title
		seen := map[string]bool{}
		for i, s := range pan.Series {
			where := fmt.Sprintf("panel %d (%q), series %d (%q)", p, pan.Title, i, s.Name)
			if err := checkSeries(s, seen); err != nil {
				return nil, fmt.Errorf("render curves: %s: %w", where, err)
			}
			mean, lo, hi := MeanCIBand(s.HV, opt.Level)
			mean, lo, hi = MovingAverage(mean, opt.Window), MovingAverage(lo, opt.Window), MovingAverage(hi, opt.Window)
			c := Curve{Name: s.Name}
			for _, t := range drawnRounds(len(mean)) {
				c.Rounds = append(c.Rounds, t+1)
				c.Mean, c.Lo, c.Hi = append(c.Mean, mean[t]), append(c.Lo, lo[t]), append(c.Hi, hi[t])
			}
			out[p].Curves = append(out[p].Curves, c)
		}
	}
	return out, nil
}

// checkSeries rejects a series Curves cannot average: no name, a name seen
// before in the panel (recorded in seen), no seed, no round, ragged seeds,
// a non-finite value.
func checkSeries(s Series, seen map[string]bool) error {
	switch {
	case s.Name == "":
		return errors.New("empty name")
	case seen[s.Name]:
		return errors.New("duplicate name")
	case len(s.HV) == 0:
		return errors.New("no seed")
	case len(s.HV[0]) == 0:
		return errors.New("no round")
	}
	seen[s.Name] = true
	T := len(s.HV[0])
	for k, traj := range s.HV {
		if len(traj) != T {
			return fmt.Errorf("ragged seeds (seed 0 has %d rounds, seed %d has %d)", T, k, len(traj))
		}
		for t, v := range traj {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("seed %d round %d: non-finite HV %v", k, t+1, v)
			}
		}
	}
	return nil
}

// drawnRounds lists the 0-based rounds a curve of T rounds keeps: every
// step-th round (rounds step, 2·step, …) plus rounds 1 and T,
// step = ⌈T/maxPlotPoints⌉.
func drawnRounds(T int) []int {
	step := (T + maxPlotPoints - 1) / maxPlotPoints
	idx := []int{0}
	for t := step - 1; t < T; t += step {
		if t > 0 {
			idx = append(idx, t)
		}
	}
	if idx[len(idx)-1] != T-1 {
		idx = append(idx, T-1)
	}
	return idx
}
