package pipeline

import (
	"fmt"
	"strings"
)

// When two records of one task disagree — the lock's record for the
// task's current key and the store's index entry for that key name other
// outputs, or the lock's record is not what re-executing the task gives —
// neither wins by rule. The task is re-executed and the result decides:
// the record that differs from it is the loser, and is replaced (an index
// entry is first set aside in the store's corrupt/ directory; a lock record
// is rewritten from the re-execution, never from the store's word). Every
// such case is reported by task ID.

// Dispute is one task whose lock record and store index entry disagreed,
// or whose lock record was not reproduced by its re-execution.
type Dispute struct {
	Task string
	// Lock is the lock's record of the outputs for the task's key.
	Lock Outputs
	// Index is the store's index entry for the same key; nil when the
	// store had no entry (the task was re-executed and its result
	// differed from the lock's record).
	Index Outputs
	// Computed is what re-executing the task gave; nil when it has not run
	// (a status pass) or failed.
	Computed Outputs
}

// Winner names the record that the re-execution agrees with: "lock",
// "index", "neither", or "" when it has not run.
func (d *Dispute) Winner() string {
	switch {
	case d.Computed == nil:
		return ""
	case d.Computed.Equal(d.Lock):
		return "lock"
	case d.Index != nil && d.Computed.Equal(d.Index):
		return "index"
	}
	return "neither"
}

// String describes the dispute and, once settled, how: which record lost
// and what replaced it.
func (d *Dispute) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: the lock records %s", d.Task, outputList(d.Lock))
	if d.Index != nil {
		fmt.Fprintf(&b, ", the store's index entry for the same key %s", outputList(d.Index))
	} else {
		b.WriteString(", the store could not give the outputs of its entry (missing or incomplete)")
	}
	switch d.Winner() {
	case "":
		b.WriteString("; re-executing the task settles it")
	case "lock":
		b.WriteString("; the re-execution gives the lock's outputs: the index entry was wrong and is replaced (the old one set aside in the store's corrupt/)")
	case "index":
		b.WriteString("; the re-execution gives the index entry's outputs: the lock's record was wrong and is replaced")
	default:
		fmt.Fprintf(&b, "; the re-execution gives %s: both were wrong, and both are replaced", outputList(d.Computed))
	}
	return b.String()
}

// outputList prints outputs as "name=sha256:abcdef123456…", sorted.
func outputList(o Outputs) string {
	if len(o) == 0 {
		return "no outputs"
	}
	parts := make([]string, len(o))
	for i, nd := range o {
		h := nd.Digest.String()
		if len(h) > 19 {
			h = h[:19] + "…"
		}
		parts[i] = nd.Name + "=" + h
	}
	return "{" + strings.Join(parts, " ") + "}"
}
