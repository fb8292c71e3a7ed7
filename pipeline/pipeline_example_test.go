package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing/fstest"

	"thv/artifacts"
	"thv/pipeline"
	"thv/pipeline/codeid"
)

// words splits its params' text into words, one per line.
func words(_ context.Context, params []byte, _ map[string][]byte) (map[string][]byte, error) {
	var p struct{ Text string }
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, err
	}
	return map[string][]byte{"list": []byte(strings.Join(strings.Fields(p.Text), "\n"))}, nil
}

// common lists the words its two inputs share, sorted.
func common(_ context.Context, _ []byte, in map[string][]byte) (map[string][]byte, error) {
	a, b := strings.Split(string(in["a"]), "\n"), strings.Split(string(in["b"]), "\n")
	var both []string
	for _, w := range a {
		if slices.Contains(b, w) && !slices.Contains(both, w) {
			both = append(both, w)
		}
	}
	slices.Sort(both)
	return map[string][]byte{"words": []byte(strings.Join(both, " "))}, nil
}

// A plan of three tasks, two of one kind feeding one of another, brought
// up to date in a fresh store, then again: the second pass executes
// nothing. Changing one task's parameters reruns it and what depends on
// it, and nothing else.
func Example() {
	dir, err := os.MkdirTemp("", "pipeline-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := artifacts.Open(filepath.Join(dir, ".thv"), artifacts.Create)
	if err != nil {
		log.Fatal(err)
	}
	// A kind's code identity is derived from the source of its package
	// and its imports: here a module "example" held in memory (a binary
	// embeds its own source, as thv does).
	code := codeid.New(codeid.Config{Path: "example", Toolchain: "go1.26", Sources: fstest.MapFS{
		"text/words.go":  {Data: []byte("package text\n\nfunc Words() {}\n")},
		"text/common.go": {Data: []byte("package text\n\nfunc Common() {}\n")},
	}})
	kinds, err := pipeline.NewKinds(code,
		pipeline.Kind{Name: "words", Run: words, Entry: "example/text"},
		pipeline.Kind{Name: "common", Run: common, Entry: "example/text"})
	if err != nil {
		log.Fatal(err)
	}
	plan := func(second string) *pipeline.Plan {
		p := pipeline.NewPlan()
		a := p.Add(&pipeline.Task{ID: "words/a", Kind: "words", Params: map[string]string{"text": "to be or not to be"}})
		b := p.Add(&pipeline.Task{ID: "words/b", Kind: "words", Params: map[string]string{"text": second}})
		p.Add(&pipeline.Task{ID: "common", Kind: "common", Deps: []pipeline.Dep{{Name: "a", From: a, Output: "list"}, {Name: "b", From: b, Output: "list"}}})
		return p
	}
	repro := func(second string) {
		proj, err := pipeline.NewProject(plan(second), kinds, store, filepath.Join(dir, "example.lock"), "example")
		if err != nil {
			log.Fatal(err)
		}
		rep, err := proj.Repro(context.Background(), pipeline.Options{Jobs: 2})
		if err != nil {
			log.Fatal(err)
		}
		last := rep.Results[len(rep.Results)-1] // in plan order: common
		words, _ := last.Outputs.Get("words")
		data, err := store.Get(words)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("executed %d, cached %d; %s: %q\n", rep.Executed, rep.Cached, last.Task.ID, data)
	}
	repro("not that question")
	repro("not that question")
	repro("to do is to be")
	// Output:
	// executed 3, cached 0; common: "not"
	// executed 0, cached 3; common: "not"
	// executed 2, cached 1; common: "be to"
}
