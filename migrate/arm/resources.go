package arm

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/recurhq/recur/migrate"
)

// Resource types, in lower case: ARM compares types in any case.
const (
	collectionType = "microsoft.scheduler/jobcollections"
	jobType        = "microsoft.scheduler/jobcollections/jobs"
	deploymentType = "microsoft.resources/deployments"
)

// reader reads the resources of one template.
type reader struct {
	t    *template
	file string
	data []byte
	out  []migrate.Resource
}

type entry struct {
	n    *node
	path string
}

// entries returns the resources of a resources member: an array, or the
// object of symbolic names that languageVersion 2.0 templates have.
func entries(n *node, path string) ([]entry, bool) {
	var es []entry
	switch v := n.val.(type) {
	case []*node:
		for i, e := range v {
			es = append(es, entry{e, element(path, i)})
		}
	case *object:
		for _, k := range v.keys {
			es = append(es, entry{v.vals[k], member(path, k)})
		}
	default:
		return nil, false
	}
	return es, true
}

// nested returns the resources nested in o, a resource at path.
func nested(o *object, path string) []entry {
	n, p, ok := o.at("resources", path)
	if !ok {
		return nil
	}
	es, _ := entries(n, p)
	return es
}

// literalMember returns o's member key when it is a string that is not
// an expression.
func literalMember(o *object, key string) (string, bool) {
	n, ok := o.get(key)
	if !ok {
		return "", false
	}
	s, ok := n.val.(string)
	if !ok {
		return "", false
	}
	if _, expr := expression(s); expr {
		return "", false
	}
	return literal(s), true
}

func (r *reader) source(n *node, path string) migrate.Source {
	return migrate.Source{File: r.file, Path: path, Line: line(r.data, n.off)}
}

// resource reads the top-level resource at path. Resources of other
// types than Azure Scheduler's are skipped, and so are those that
// languageVersion 2.0 marks existing: the template refers to them, it
// does not deploy them.
func (r *reader) resource(n *node, path string) {
	o, ok := n.val.(*object)
	if !ok {
		return
	}
	if ex, ok := o.get("existing"); ok && ex.val == true {
		return
	}
	typ, _ := literalMember(o, "type")
	switch strings.ToLower(typ) {
	case collectionType:
		r.collection(n, o, path)
	case jobType:
		r.job(n, o, path, nil)
	case deploymentType:
		r.deployment(o, path)
	}
}

// parent is a job's collection, as the collection's resource names it.
type parent struct {
	name string
	// label is the text of name in the file, for reports, when the name
	// is not known.
	label string
	// missing is what the collection's name lacks, which its jobs then
	// lack too.
	missing []migrate.Missing
}

func (r *reader) collection(n *node, o *object, path string) {
	if m, ok := loop(o, path); ok {
		r.unevaluated(n, path, m, nil)
		return
	}
	b := &building{t: r.t}
	name, raw, ok := b.name(o, path)
	if ok && strings.Contains(name, "/") {
		b.add(problem{nameOf(raw), "a collection's name has no /"}, member(path, "name"))
		name = ""
	}
	par := &parent{name: name, label: unknownName(name, raw), missing: slices.Clone(b.missing)}
	deployed := b.deployed(o, path)
	body := map[string]any{}
	for _, k := range []string{"location", "properties", "tags"} {
		b.member(body, o, path, k)
	}
	if deployed {
		r.out = append(r.out, migrate.Resource{Kind: migrate.Collection, Collection: name, Label: par.label,
			Body: b.marshal(body, path), Source: r.source(n, path), Missing: b.missing})
	}
	for _, e := range nested(o, path) {
		if eo, ok := e.n.val.(*object); ok {
			if typ, _ := literalMember(eo, "type"); strings.EqualFold(typ, "jobs") || strings.EqualFold(typ, jobType) {
				r.job(e.n, eo, e.path, par)
			}
		}
	}
}

// job reads the job at path: nested in the collection par, or at the top
// level (par nil), where its name is collection/job.
func (r *reader) job(n *node, o *object, path string, par *parent) {
	if m, ok := loop(o, path); ok {
		var coll *string
		if par != nil {
			coll = &par.name
		}
		r.unevaluated(n, path, m, coll)
		return
	}
	b := &building{t: r.t}
	res := migrate.Resource{Kind: migrate.Job, Source: r.source(n, path)}
	if par != nil {
		res.Collection = par.name
		for _, m := range par.missing {
			b.addMissing(m)
		}
	}
	name, raw, ok := b.name(o, path)
	if ok {
		coll, job, cut := strings.Cut(name, "/")
		switch {
		case par != nil && !cut:
			res.Job = name
		case par != nil && (par.name == "" || !strings.EqualFold(coll, par.name) || strings.Contains(job, "/")):
			b.add(problem{nameOf(raw), "a nested job's name is its own, or collection/job of its collection"}, member(path, "name"))
		case par != nil:
			res.Job = job
		case !cut || coll == "" || job == "" || strings.Contains(job, "/"):
			b.add(problem{nameOf(raw), "a job's name at the top level is collection/job"}, member(path, "name"))
		default:
			res.Collection, res.Job = coll, job
		}
	}
	switch {
	case res.Collection != "" && res.Job != "":
	case par != nil:
		res.Label = joinName(cmp.Or(par.name, par.label), cmp.Or(res.Job, raw))
	default:
		res.Label = raw
	}
	deployed := b.deployed(o, path)
	body := map[string]any{}
	b.member(body, o, path, "properties")
	res.Body, res.Missing = b.marshal(body, path), b.missing
	if deployed {
		r.out = append(r.out, res)
	}
}

// unknownName is the Label of a resource whose name is raw in the file
// and name once evaluated: raw when name is not known, else "" (reports
// show name).
func unknownName(name, raw string) string {
	if name != "" {
		return ""
	}
	return raw
}

// joinName is the Label of a nested job: coll/job, job alone when the
// file has no text for its collection's name, and "" (reports show
// where it is) when it has none for its own.
func joinName(coll, job string) string {
	switch {
	case job == "":
		return ""
	case coll == "":
		return job
	}
	return coll + "/" + job
}

// nameOf is the Name of a problem with a resource's name: its text when
// it is an expression, whose value --set then supplies; nothing when it
// is a literal the user must correct in the file.
func nameOf(raw string) string {
	if _, ok := expression(raw); ok {
		return raw
	}
	return ""
}

// loop returns what a resource in a copy loop lacks: recur import does
// not evaluate loops (copyIndex and the names they make).
func loop(o *object, path string) (migrate.Missing, bool) {
	_, p, ok := o.at("copy", path)
	return migrate.Missing{Path: p, Reason: "the resource is in a copy loop, which recur import does not evaluate"}, ok
}

// deployment reports the Scheduler resources of a nested deployment's
// inline template; a linked template (templateLink) is another file,
// which recur import reads when it is given.
func (r *reader) deployment(o *object, path string) {
	props, pp, _ := o.at("properties", path)
	var po *object
	if props != nil {
		po, _ = props.val.(*object)
	}
	tmpl, tp, _ := po.at("template", pp)
	var to *object
	if tmpl != nil {
		to, _ = tmpl.val.(*object)
	}
	m := migrate.Missing{Path: path, Reason: "the resource is in a nested deployment (Microsoft.Resources/deployments), which recur import does not evaluate"}
	for _, e := range nested(to, tp) {
		r.unevaluated(e.n, e.path, m, nil)
	}
}

// unevaluated reports the Scheduler resource at path, and the jobs
// nested in it, with m, what keeps the reader from evaluating them, and
// the names they have when these are literals. coll is the collection of
// a nested job.
func (r *reader) unevaluated(n *node, path string, m migrate.Missing, coll *string) {
	o, ok := n.val.(*object)
	if !ok {
		return
	}
	typ, _ := literalMember(o, "type")
	typ = strings.ToLower(typ)
	name, _ := literalMember(o, "name")
	res := migrate.Resource{Kind: migrate.Job, Source: r.source(n, path), Missing: []migrate.Missing{m}, Label: unknownName(name, rawName(o))}
	switch {
	case coll != nil && (typ == "jobs" || typ == jobType):
		res.Collection, res.Job = *coll, name
		if res.Label != "" {
			res.Label = joinName(*coll, res.Label)
		}
	case coll != nil:
		return
	case typ == collectionType:
		res.Kind, res.Collection = migrate.Collection, name
		r.out = append(r.out, res)
		for _, e := range nested(o, path) {
			r.unevaluated(e.n, e.path, m, &name)
		}
		return
	case typ == jobType:
		if c, j, ok := strings.Cut(name, "/"); ok {
			res.Collection, res.Job = c, j
		}
	case typ == deploymentType:
		props, pp, _ := o.at("properties", path)
		if props != nil {
			po, _ := props.val.(*object)
			if tmpl, tp, ok := po.at("template", pp); ok {
				to, _ := tmpl.val.(*object)
				for _, e := range nested(to, tp) {
					r.unevaluated(e.n, e.path, m, nil)
				}
			}
		}
		return
	default:
		return
	}
	r.out = append(r.out, res)
}

// rawName is the text of o's name, "" when it is not a string.
func rawName(o *object) string {
	n, ok := o.get("name")
	if !ok {
		return ""
	}
	s, _ := n.val.(string)
	return s
}

// building gathers one resource's body and what it lacks.
type building struct {
	t       *template
	missing []migrate.Missing
	seen    map[migrate.Missing]bool
}

// add adds p, what the template string at path lacks. A value --set gives
// for the place (Missing.Key) supplies it too, when any value does.
func (b *building) add(p problem, path string) {
	m := migrate.Missing{Name: p.name, Path: path, Reason: p.reason}
	if p.name != "" {
		m.Key = b.t.key(path)
	}
	b.addMissing(m)
}

// addWithin adds p, what a value lacks at path within the value of a
// template string: no template string is there for --set to replace.
func (b *building) addWithin(p problem, path string) {
	b.addMissing(migrate.Missing{Name: p.name, Path: path, Reason: p.reason})
}

func (b *building) addMissing(m migrate.Missing) {
	if b.seen == nil {
		b.seen = map[migrate.Missing]bool{}
	}
	if !b.seen[m] {
		b.seen[m] = true
		b.missing = append(b.missing, m)
	}
}

func (b *building) addAll(u *unknown, path string) {
	for _, p := range u.problems {
		b.add(p, path)
	}
}

// at returns the value of the template string raw at path in the file:
// the value --set gives for the place, else raw's.
func (b *building) at(raw, path string) any {
	if v, ok := b.t.opts.Set[b.t.key(path)]; ok {
		return v
	}
	return b.t.evalString(raw)
}

// name returns the value of o's name, its text, and whether it is known.
func (b *building) name(o *object, path string) (string, string, bool) {
	n, p, ok := o.at("name", path)
	if !ok {
		b.add(problem{"", "the resource has no name"}, member(path, "name"))
		return "", "", false
	}
	raw, ok := n.val.(string)
	if !ok {
		b.add(problem{"", "the name is not a string"}, p)
		return "", "", false
	}
	switch v := b.at(raw, p).(type) {
	case string:
		if v != "" {
			return v, raw, true
		}
		b.add(problem{nameOf(raw), "the name is empty"}, p)
	case *unknown:
		b.addAll(v, p)
	default:
		b.add(problem{nameOf(raw), fmt.Sprintf("the name is %s, not a string", typeName(v))}, p)
	}
	return "", raw, false
}

// deployed reports whether the resource is deployed: its condition, when
// it has one, is true. A condition the reader cannot evaluate is a
// Missing; the user supplies true or false for it.
func (b *building) deployed(o *object, path string) bool {
	n, p, ok := o.at("condition", path)
	if !ok {
		return true
	}
	raw, _ := n.val.(string)
	v := plain(n)
	if raw != "" {
		v = b.at(raw, p)
	}
	switch v := v.(type) {
	case bool:
		return v
	case string:
		if strings.EqualFold(v, "true") || strings.EqualFold(v, "false") {
			return strings.EqualFold(v, "true")
		}
	case *unknown:
		b.addAll(v, p)
		return true
	}
	b.add(problem{nameOf(raw), fmt.Sprintf("the condition is %s, not true or false", typeName(v))}, p)
	return true
}

// member sets body[key] to the value of o's member key, when it has one.
func (b *building) member(body map[string]any, o *object, path, key string) {
	n, p, ok := o.at(key, path)
	if !ok {
		return
	}
	if v := b.value(n, p); v != nil {
		body[key] = v
	}
}

// value returns the value of n, at path in the file, with every template
// string evaluated. A string whose value is unknown stays as written, so
// that the body shows what it lacks; null members are dropped, as ARM
// drops them.
func (b *building) value(n *node, path string) any {
	switch v := n.val.(type) {
	case string:
		x := b.at(v, path)
		if u, ok := x.(*unknown); ok {
			b.addAll(u, path)
			return v
		}
		return b.settle(x, v, path)
	case *object:
		m := make(map[string]any, len(v.keys))
		for _, k := range v.keys {
			if x := b.value(v.vals[k], member(path, k)); x != nil {
				m[k] = x
			}
		}
		return m
	case []*node:
		a := make([]any, len(v))
		for i, e := range v {
			a[i] = b.value(e, element(path, i))
		}
		return a
	case json.Number:
		return number(v)
	}
	return n.val
}

// settle returns v, the value of the template string text at path, with
// the unknowns within it taken out as Missing.
func (b *building) settle(v any, text, path string) any {
	switch v := v.(type) {
	case *unknown:
		for _, p := range v.problems {
			b.addWithin(p, path)
		}
		return nil
	case *scope:
		b.addWithin(problem{text, v.fn + " is an object that recur import does not evaluate whole"}, path)
		return nil
	case map[string]any:
		m := make(map[string]any, len(v))
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if x := b.settle(v[k], text, member(path, k)); x != nil {
				m[k] = x
			}
		}
		return m
	case []any:
		a := make([]any, len(v))
		for i, e := range v {
			a[i] = b.settle(e, text, element(path, i))
		}
		return a
	}
	return v
}

// marshal writes a body, the resource at path's, as the PUT sends it;
// HTML characters stay as they are, as the template has them. A body
// larger than a value may be is refused.
func (b *building) marshal(body map[string]any, path string) json.RawMessage {
	if !b.t.checked(path, "the body of the resource", body) {
		return nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(body); err != nil {
		// Bodies hold nothing but decoded JSON values; this is a bug.
		panic(fmt.Sprintf("arm: write a body: %v", err))
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}
