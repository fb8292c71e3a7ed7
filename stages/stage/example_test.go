package stage_test

import (
	"context"
	"fmt"
	"strings"

	"thv/pipeline"
	"thv/stages/stage"
)

// The package of a small kind, "upper": its name, its parameters, the
// names of its input role and output, declared once, and Run.

const Kind = "upper"

// Params are the task's parameters.
type Params struct {
	Prefix string `json:"prefix"`
}

// The kind's input role and output.
const (
	Text  stage.Role       = "text"
	Upper stage.OutputName = "upper.txt"
)

// Declared is what the kind reads and writes.
var Declared = stage.Declaration{
	Reads:   []stage.Role{Text},
	Outputs: []stage.Output{{Name: Upper, Results: ".", Doc: "the text in capitals"}},
}

// Run is the kind: a pure function of its parameters and inputs.
func Run(ctx context.Context, params []byte, in stage.Inputs) (stage.Outputs, error) {
	p, err := stage.Start[Params](ctx, params)
	if err != nil {
		return nil, err
	}
	text, err := stage.Read(in, Text, func(b []byte) (string, error) { return string(b), nil })
	if err != nil {
		return nil, err
	}
	return stage.Outputs{string(Upper): []byte(p.Prefix + strings.ToUpper(text))}, nil
}

// A complete small kind: what it reads and writes declared once, its Run
// reading and writing through those names, and the engine checking a
// plan's edges against the declarations before anything runs (thv dag
// --check does the same for the paper's plan).
func Example() {
	out, err := Run(context.Background(), []byte(`{"prefix": "> "}`), stage.Inputs{string(Text): []byte("hypervolume")})
	fmt.Printf("%s %v\n", out[string(Upper)], err)

	// Registered with its declaration (protocol/kinds.go does this for the
	// paper's kinds), it is checked in every plan.
	kind := pipeline.Kind{Name: Kind, Run: Run, Reads: []string{string(Text)}, Outputs: []string{string(Upper)}}
	kinds, _ := pipeline.NewKinds(nil, kind)
	first := &pipeline.Task{ID: "upper/1", Kind: Kind, Params: Params{}}
	second := &pipeline.Task{ID: "upper/2", Kind: Kind, Params: Params{Prefix: ">> "},
		Deps: []pipeline.Dep{{Name: string(Text), From: first, Output: "upper.text"}}} // misspelled
	plan := pipeline.NewPlan()
	plan.Add(first)
	plan.Add(second)
	fmt.Println(kinds.CheckPlan(plan))
	// Output:
	// > HYPERVOLUME <nil>
	// task upper/2: input text reads output "upper.text" of task upper/1, which its kind upper does not declare (it declares ["upper.txt"])
}
