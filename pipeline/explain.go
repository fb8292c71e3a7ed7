package pipeline

import (
	"encoding/json"
	"fmt"
	"strings"

	"thv/pipeline/codeid"
)

// explain says why t must run, comparing its key parts with its lock record.
func (s *pass) explain(t *Task, parts keyParts) string {
	rec, ok := s.Lock.Record(t.ID)
	if !ok {
		return "new"
	}
	var why []string
	if d := diffParams(rec.Params, parts.Params); len(d) > 0 {
		why = append(why, "params changed: "+strings.Join(d, ", "))
	}
	if code := s.explainCode(parts.Code); code != "" {
		why = append(why, code)
	}
	var inputs []string
	recInputs := rec.InputDigests()
	for _, name := range sortedKeys(parts.Inputs) {
		if recInputs[name] != parts.Inputs[name].String() {
			inputs = append(inputs, name)
		}
	}
	if len(inputs) > 0 {
		why = append(why, "input changed: "+strings.Join(inputs, ", "))
	}
	if len(why) == 0 {
		if rec.Key == parts.key() {
			return "outputs missing from the store"
		}
		return "key changed"
	}
	return strings.Join(why, "; ")
}

// maxUnitsExplained is how many changed units a reason names.
const maxUnitsExplained = 6

// explainCode names the units of a code identity that the lock records
// with another hash, or not at all: the declarations (thv/algos.Crowding,
// a method thv/algos.Layers.Peel), modules (path@version) or toolchain
// (go) that changed. Thousands of tasks share an identity: each is
// compared once per pass.
func (s *pass) explainCode(id *codeid.Identity) string {
	if why, ok := s.codeWhy.Load(id.Digest); ok {
		return why.(string)
	}
	var units []string
	for _, u := range id.Units {
		if old, ok := s.Lock.Code[u.Name]; !ok || old != u.Hash {
			units = append(units, u.Name)
		}
	}
	why := ""
	if len(units) > maxUnitsExplained {
		units = append(units[:maxUnitsExplained], fmt.Sprintf("and %d more", len(units)-maxUnitsExplained))
	}
	if len(units) > 0 {
		why = "code changed in " + strings.Join(units, ", ")
	}
	s.codeWhy.Store(id.Digest, why)
	return why
}

// diffParams lists the fields that differ between two canonical parameter
// encodings, as "path old → new".
func diffParams(old, cur json.RawMessage) []string {
	var a, b any
	if json.Unmarshal(old, &a) != nil || json.Unmarshal(cur, &b) != nil {
		return []string{"parameters changed"}
	}
	var out []string
	diffValue("", a, b, &out)
	return out
}

func diffValue(path string, a, b any, out *[]string) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		for _, k := range sortedKeys(keys) {
			p := k
			if path != "" {
				p = path + "." + k
			}
			diffValue(p, am[k], bm[k], out)
		}
		return
	}
	as, bs := jsonText(a), jsonText(b)
	if as != bs {
		*out = append(*out, fmt.Sprintf("%s %s → %s", path, as, bs))
	}
}

func jsonText(v any) string {
	if v == nil {
		return "(none)"
	}
	b, _ := json.Marshal(v)
	return strings.Trim(string(b), "\"")
}
