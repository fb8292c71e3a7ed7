// Command lockdiff compares locks task by task: which tasks' outputs differ,
// which keys changed, which tasks only one side has. It is how a change
// that must not change a result is checked (a speedup: every key may
// change, no output may).
//
//	go run ./internal/lockdiff OLD NEW
//
// OLD and NEW are lock files, or directories whose *.lock files (at any
// depth) are paired by their path below the directory, as thv readings
// writes them under results/readings/. For each side it prints the outputs
// digest, a SHA-256 over every task's ID and output digests in ID order:
// two sides with the same outputs digest have the same outputs, whatever
// their keys. The exit status is 0 when every task is on both sides with
// the same outputs, 1 otherwise, 2 on bad input.
//
// With -list every differing task is printed, not only the first 20.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// task is what a lock records of a task, as far as the comparison reads it.
type task struct {
	ID      string            `json:"id"`
	Kind    string            `json:"kind"`
	Key     string            `json:"key"`
	Outputs map[string]string `json:"outputs"`
}

type lockFile struct {
	Tasks []task `json:"tasks"`
}

func main() {
	list := flag.Bool("list", false, "print every differing task (default: the first 20)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: lockdiff [-list] OLD NEW  (lock files, or directories of *.lock files)\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 2 {
		flag.Usage()
		os.Exit(2)
	}
	same, err := run(os.Stdout, flag.Arg(0), flag.Arg(1), *list)
	if err != nil {
		fmt.Fprintln(os.Stderr, "lockdiff:", err)
		os.Exit(2)
	}
	if !same {
		os.Exit(1)
	}
}

// run compares old and new (files or directories) and reports whether
// their outputs are the same, task by task.
func run(w io.Writer, old, new string, list bool) (bool, error) {
	oldLocks, err := locksAt(old)
	if err != nil {
		return false, err
	}
	newLocks, err := locksAt(new)
	if err != nil {
		return false, err
	}
	names := slices.Sorted(maps.Keys(oldLocks))
	for n := range newLocks {
		if _, ok := oldLocks[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	same := true
	for _, n := range names {
		o, n1 := oldLocks[n], newLocks[n]
		label := n
		if label == "" {
			label = filepath.Base(old) + " → " + filepath.Base(new)
		}
		switch {
		case o == "":
			fmt.Fprintf(w, "%s: only in %s\n", label, new)
			same = false
			continue
		case n1 == "":
			fmt.Fprintf(w, "%s: only in %s\n", label, old)
			same = false
			continue
		}
		ok, err := compare(w, label, o, n1, list)
		if err != nil {
			return false, err
		}
		same = same && ok
	}
	return same, nil
}

// locksAt returns the lock files at path by their name relative to it: a
// file is itself (""), a directory its *.lock files.
func locksAt(path string) (map[string]string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return map[string]string{"": path}, nil
	}
	out := map[string]string{}
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".lock") {
			rel, err := filepath.Rel(path, p)
			if err != nil {
				return err
			}
			out[rel] = p
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no *.lock file in the directory", path)
	}
	return out, nil
}

func readLock(path string) (map[string]task, string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, "", err
	}
	var l lockFile
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, "", fmt.Errorf("%s: not a lock: %w", path, err)
	}
	tasks := make(map[string]task, len(l.Tasks))
	for _, t := range l.Tasks {
		if _, dup := tasks[t.ID]; dup {
			return nil, "", fmt.Errorf("%s: task %s twice", path, t.ID)
		}
		tasks[t.ID] = t
	}
	return tasks, outputsDigest(tasks), nil
}

// outputsDigest is the SHA-256 of every task's ID and outputs, in ID and
// output-name order: equal for two locks with the same tasks and outputs.
func outputsDigest(tasks map[string]task) string {
	h := sha256.New()
	for _, id := range slices.Sorted(maps.Keys(tasks)) {
		t := tasks[id]
		fmt.Fprintf(h, "%s\n", id)
		for _, name := range slices.Sorted(maps.Keys(t.Outputs)) {
			fmt.Fprintf(h, "\t%s %s\n", name, t.Outputs[name])
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// compare prints the comparison of two locks and reports whether their
// tasks and outputs are the same.
func compare(w io.Writer, label, oldPath, newPath string, list bool) (bool, error) {
	old, oldDigest, err := readLock(oldPath)
	if err != nil {
		return false, err
	}
	new, newDigest, err := readLock(newPath)
	if err != nil {
		return false, err
	}
	var keys, outputs, onlyOld, onlyNew []string
	byKind := map[string]int{}
	for _, id := range slices.Sorted(maps.Keys(old)) {
		o := old[id]
		n, ok := new[id]
		if !ok {
			onlyOld = append(onlyOld, id)
			continue
		}
		if o.Key != n.Key {
			keys = append(keys, id)
		}
		if !maps.Equal(o.Outputs, n.Outputs) {
			outputs = append(outputs, id)
			byKind[o.Kind]++
		}
	}
	for _, id := range slices.Sorted(maps.Keys(new)) {
		if _, ok := old[id]; !ok {
			onlyNew = append(onlyNew, id)
		}
	}
	fmt.Fprintf(w, "%s: %d tasks, %d keys changed, %d outputs changed, %d only old, %d only new\n",
		label, len(old), len(keys), len(outputs), len(onlyOld), len(onlyNew))
	fmt.Fprintf(w, "  outputs digest old %s\n  outputs digest new %s\n", oldDigest, newDigest)
	if len(outputs) > 0 {
		var kinds []string
		for _, k := range slices.Sorted(maps.Keys(byKind)) {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, byKind[k]))
		}
		fmt.Fprintf(w, "  changed outputs by kind: %s\n", strings.Join(kinds, ", "))
	}
	show := func(what string, ids []string) {
		for i, id := range ids {
			if i == 20 && !list {
				fmt.Fprintf(w, "  … %d more (-list prints all)\n", len(ids)-20)
				return
			}
			fmt.Fprintf(w, "  %s %s\n", what, id)
		}
	}
	show("outputs differ:", outputs)
	show("only old:", onlyOld)
	show("only new:", onlyNew)
	return len(outputs) == 0 && len(onlyOld) == 0 && len(onlyNew) == 0, nil
}
