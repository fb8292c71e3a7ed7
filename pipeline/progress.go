package pipeline

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Progress reports a pass over the DAG: a live bar with counts and ETA on a
// terminal, a plain line per 5% of tasks otherwise. Wall-clock times appear
// here only, never in anything hashed. A nil *Progress is silent.
type Progress struct {
	w        io.Writer
	live     bool
	mu       sync.Mutex
	total    int
	done     int
	executed int
	cached   int
	failed   int
	running  int
	busy     time.Duration // summed execution time of executed tasks
	busyCost float64       // their summed cost estimates
	cost     float64       // the cost estimates of all tasks
	costDone float64       // … of the tasks decided so far
	jobs     int
	start    time.Time
	last     time.Time
	nextLine int
}

// NewProgress returns a Progress that writes to w for a pass of jobs
// parallel executions (the ETA's divisor); live selects the redrawn
// single-line bar.
func NewProgress(w io.Writer, live bool, jobs int) *Progress {
	now := time.Now()
	return &Progress{w: w, live: live, jobs: max(1, jobs), start: now, last: now}
}

func (p *Progress) setTotal(n int, cost float64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.total, p.cost = n, cost
	p.mu.Unlock()
}

func (p *Progress) jobStarted() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.running++
	p.mu.Unlock()
}

func (p *Progress) jobEnded() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.running--
	p.mu.Unlock()
}

func (p *Progress) taskDone(r *Result) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	p.costDone += r.Task.Cost
	switch r.Status {
	case Executed:
		p.executed++
		p.busy += r.Elapsed
		p.busyCost += r.Task.Cost
	case Cached:
		p.cached++
	case Failed:
		p.failed++
		if r.Err != nil {
			p.clearLine()
			fmt.Fprintf(p.w, "FAILED %s: %v\n", r.Task.ID, r.Err)
		}
	}
	now := time.Now()
	if p.live {
		if now.Sub(p.last) >= 100*time.Millisecond || p.done == p.total {
			p.last = now
			p.draw()
		}
		return
	}
	if p.executed+p.failed+p.running == 0 {
		return // all cached so far: a no-op pass prints nothing
	}
	if p.done*20/max(1, p.total) >= p.nextLine || p.done == p.total {
		p.nextLine = p.done*20/max(1, p.total) + 1
		fmt.Fprintln(p.w, p.line())
	}
}

func (p *Progress) line() string {
	elapsed := time.Since(p.start).Round(time.Second)
	eta := "?"
	if p.busyCost > 0 {
		// Tasks still to decide are assumed to run, at the measured time
		// per unit of estimated cost.
		left := max(0, p.cost-p.costDone)
		secs := p.busy.Seconds() / p.busyCost * left / float64(p.jobs)
		eta = (time.Duration(secs * float64(time.Second))).Round(time.Second).String()
	} else if p.done == p.total {
		eta = "0s"
	}
	return fmt.Sprintf("%d/%d tasks  executed %d  cached %d  failed %d  elapsed %s  ETA %s",
		p.done, p.total, p.executed, p.cached, p.failed, elapsed, eta)
}

func (p *Progress) draw() {
	const width = 30
	filled := width * p.done / max(1, p.total)
	fmt.Fprintf(p.w, "\r[%s%s] %s\x1b[K", strings.Repeat("#", filled), strings.Repeat("-", width-filled), p.line())
}

func (p *Progress) clearLine() {
	if p.live {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}

func (p *Progress) finish() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live {
		p.draw()
		fmt.Fprintln(p.w)
	}
}
