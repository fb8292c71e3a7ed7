package pipeline

import "sort"

// Task is one node of the DAG: a stage kind applied to canonical parameters
// and to the outputs of other tasks.
type Task struct {
	ID     string // stable identity, e.g. "run/d3/concave/THV-UCB/eta=0.01/seed=0"
	Kind   string // a name registered in Kinds
	Params any    // JSON-encoded canonically for the key and the spec
	// Roots are code roots the task runs beyond its kind's entry (a
	// bandit run names its algorithm's registered constructor,
	// "thv/algos/thvucb.init"): the code identity is what the kind's entry
	// and these can reach.
	Roots []string
	Deps  []Dep

	// A task with Expand waits for Trigger, then Expand receives the
	// trigger's output TriggerOutput and sets the remaining parameters and
	// dependencies (adding tasks to the plan as needed).
	Trigger       *Task
	TriggerOutput string
	Expand        func(p *Plan, trigger []byte) error

	// Cost estimates the work of the task in arbitrary units: the
	// scheduler starts expensive tasks first and the progress bar weighs
	// its ETA by it. It does not enter the key.
	Cost float64

	order int // creation order: the deterministic iteration order
	// expandedBy is the task whose expansion added this one (nil: the
	// plan's own), and expandIdx its place among what that expansion
	// added. Expansions run when their triggers finish, in an order the
	// scheduling decides: the lock orders their tasks by these instead
	// (lockOrder), so that it is the same however the tasks were run.
	expandedBy *Task
	expandIdx  int
}

// Dep feeds output Output of task From to this task under role Name.
type Dep struct {
	Name   string
	From   *Task
	Output string
}

// upstream lists the tasks t waits for: its trigger while it has not
// expanded, else its dependencies.
func (t *Task) upstream() []*Task {
	if t.Expand != nil {
		return []*Task{t.Trigger}
	}
	ups := make([]*Task, len(t.Deps))
	for i, d := range t.Deps {
		ups[i] = d.From
	}
	return ups
}

// Plan is a DAG of tasks, kept in creation order.
type Plan struct {
	Tasks []*Task
	byID  map[string]*Task
	// expanding is the task whose Expand is adding tasks (expandedBy),
	// added how many so far.
	expanding *Task
	added     int
}

// NewPlan returns an empty plan.
func NewPlan() *Plan { return &Plan{byID: map[string]*Task{}} }

// Add appends t and returns it, or returns the task already added under
// t.ID (the same task reached twice, e.g. a final run that the grid search
// already ran).
func (p *Plan) Add(t *Task) *Task {
	if old, ok := p.byID[t.ID]; ok {
		return old
	}
	t.order = len(p.Tasks)
	if p.expanding != nil {
		t.expandedBy, t.expandIdx = p.expanding, p.added
		p.added++
	}
	p.Tasks = append(p.Tasks, t)
	p.byID[t.ID] = t
	return t
}

// lockOrder returns the plan's tasks in the order a lock lists them:
// the plan's own in creation order, each followed by the tasks its
// expansion added, in the order it added them (recursively), whatever the
// order in which the expansions ran.
func (p *Plan) lockOrder() []*Task {
	added := map[*Task][]*Task{}
	for _, t := range p.Tasks {
		if t.expandedBy != nil {
			added[t.expandedBy] = append(added[t.expandedBy], t)
		}
	}
	out := make([]*Task, 0, len(p.Tasks))
	var visit func(t *Task)
	visit = func(t *Task) {
		out = append(out, t)
		kids := added[t]
		sort.Slice(kids, func(i, j int) bool { return kids[i].expandIdx < kids[j].expandIdx })
		for _, k := range kids {
			visit(k)
		}
	}
	for _, t := range p.Tasks {
		if t.expandedBy == nil {
			visit(t)
		}
	}
	return out
}

// Task returns the task with the given ID.
func (p *Plan) Task(id string) (*Task, bool) { t, ok := p.byID[id]; return t, ok }

// KindOrder returns the plan's kinds in the order they first appear, which
// for a plan built upstream first is the order along the DAG.
func (p *Plan) KindOrder() []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range p.Tasks {
		if !seen[t.Kind] {
			seen[t.Kind] = true
			out = append(out, t.Kind)
		}
	}
	return out
}

// CountByKind returns how many tasks of each kind the plan has now.
func (p *Plan) CountByKind() map[string]int {
	m := map[string]int{}
	for _, t := range p.Tasks {
		m[t.Kind]++
	}
	return m
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
