package jobs

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/recurhq/recur/recurrence"
)

// UnknownMember is a member of a body whose name its object does not
// have (CheckMembers refuses it as CodeUnknownProperty).
type UnknownMember struct {
	// Path is the member's JSON path, as the body spells it:
	// properties.action.request.retryPolicy.
	Path string
	// Meant is what the member probably meant, a JSON path: the nearest
	// member of the same name (in any letter case) elsewhere in the
	// body's type (properties.action.retryPolicy), else a member of the
	// same object with a close spelling; "" when there is neither.
	Meant string
}

// PruneUnknown returns the JSON text data, which is to be decoded into a
// value of type t, without the members whose names their objects do not
// have, at any depth, and those members in the order of the text. The
// rest of the text is kept byte for byte, so what else CheckMembers
// refuses (a member given twice, null in an array) is still there for it
// to refuse. Malformed JSON is returned as it is, for decoding to report.
//
// recur import prunes what the files it reads hold but recur's API has
// not: Azure's resource provider ignored members it did not know, and
// templates that Azure deployed have some. The API itself stays strict.
func PruneUnknown(data []byte, t reflect.Type) ([]byte, []UnknownMember) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	p := &pruning{data: data, root: t}
	w := walker{dec: dec, prune: p}
	if err := w.value(nil, t, false); err != nil || len(p.cuts) == 0 {
		return data, nil
	}
	out := make([]byte, 0, len(data))
	last := int64(0)
	for _, c := range p.cuts {
		out = append(out, data[last:c[0]]...)
		last = c[1]
	}
	return append(out, data[last:]...), p.unknown
}

// pruning gathers what PruneUnknown cuts out of data: byte ranges in the
// order of the text.
type pruning struct {
	data    []byte
	root    reflect.Type
	cuts    [][2]int64
	unknown []UnknownMember
}

// member cuts the unknown member at, whose text runs from before (the end
// of the token before it: its object's { or the value before it with the
// comma after) to after (the end of its value). siblings are the names
// its object has.
func (p *pruning) member(before, after int64, at jsonPath, siblings []string) {
	p.cuts = append(p.cuts, [2]int64{before, after})
	p.unknown = append(p.unknown, UnknownMember{Path: at.String(), Meant: p.meant(at, siblings)})
}

// separator cuts the comma before the member that starts at before, when
// the members before it in its object are all cut.
func (p *pruning) separator(before int64) {
	key := before + int64(bytes.IndexByte(p.data[before:], '"'))
	p.cuts = append(p.cuts, [2]int64{before, key})
}

// meant returns what the unknown member at probably meant (UnknownMember).
func (p *pruning) meant(at jsonPath, siblings []string) string {
	name := at[len(at)-1].name
	parent := at[:len(at)-1]
	if m := nearestNamed(p.root, parent, name); m != "" {
		return m
	}
	if guess := recurrence.Closest(name, siblings); guess != "" {
		return parent.member(guess).String()
	}
	return ""
}

// nearestNamed returns the member named name (in any letter case) in the
// type t nearest to the object at parent: the fewest steps up from it
// and down to the member, then the shortest path, then the first in
// field order. The steps parent shares are written as the body has them;
// the rest as t names them, an array's element as [].
func nearestNamed(t reflect.Type, parent jsonPath, name string) string {
	key := foldName(name)
	best, bestDist, bestLen, shared := []string(nil), 0, 0, 0
	for _, m := range typeMembers(t) {
		if foldName(m[len(m)-1]) != key {
			continue
		}
		k := sharedSteps(parent, m[:len(m)-1])
		dist := len(parent) - k + len(m) - 1 - k
		if best == nil || dist < bestDist || dist == bestDist && len(m) < bestLen {
			best, bestDist, bestLen, shared = m, dist, len(m), k
		}
	}
	if best == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString(parent[:shared].String())
	for _, step := range best[shared:] {
		switch {
		case step == "":
			b.WriteString("[]")
		case b.Len() > 0:
			b.WriteString("." + step)
		default:
			b.WriteString(step)
		}
	}
	return b.String()
}

// sharedSteps returns how many steps path and steps (a typeMembers path)
// share from their start.
func sharedSteps(path jsonPath, steps []string) int {
	k := 0
	for k < len(path) && k < len(steps) {
		elem := path[k].index >= 0
		if elem != (steps[k] == "") || !elem && foldName(path[k].name) != foldName(steps[k]) {
			break
		}
		k++
	}
	return k
}

// treeMembers caches typeMembers: [][]string by reflect.Type.
var treeMembers sync.Map

// typeMembers returns the paths of every member a body of type t may
// have, as membersOf names them, "" standing for an array's element, in
// field order, depth first. Maps, the user's own JSON and types that
// decode themselves have none: any name goes there.
func typeMembers(t reflect.Type) [][]string {
	if m, ok := treeMembers.Load(t); ok {
		return m.([][]string)
	}
	var out [][]string
	var walk func(t reflect.Type, prefix []string, within []reflect.Type)
	walk = func(t reflect.Type, prefix []string, within []reflect.Type) {
		t, _ = shapeOf(t, false)
		if t == nil || slices.Contains(within, t) {
			return
		}
		switch t.Kind() {
		case reflect.Slice, reflect.Array:
			walk(t.Elem(), append(slices.Clip(prefix), ""), within)
		case reflect.Struct:
			m := membersOf(t)
			for _, name := range m.names {
				path := append(slices.Clip(prefix), name)
				out = append(out, path)
				walk(m.byKey[foldName(name)], path, append(slices.Clip(within), t))
			}
		}
	}
	walk(t, nil, nil)
	treeMembers.Store(t, out)
	return out
}

// skip passes over the value that comes next.
func (w *walker) skip() error {
	depth := 0
	for {
		tok, err := w.dec.Token()
		if err != nil {
			return errMalformed
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}
