package terraform

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/recurhq/recur/migrate"
)

// resource reads one scheduler resource.
func (e *evaluator) resource(res *resource) migrate.Resource {
	out := migrate.Resource{Kind: migrate.Job, Source: migrate.Source{File: res.file, Path: res.address(), Line: res.line}}
	s := jobSchema
	if res.typ == typeCollection {
		out.Kind, s = migrate.Collection, collectionSchema
	}
	if res.repeated != "" {
		return e.repeated(res, out, s)
	}
	r := &reading{ev: e}
	n := r.bodyNode("", res.body, s)
	out.ResourceGroup = r.resourceGroup(n)
	var body map[string]any
	if out.Kind == migrate.Collection {
		out.Collection = r.identity(res, n, "name")
		body = r.collection(n)
	} else {
		out.Collection = r.identity(res, n, "job_collection_name")
		out.Job = r.identity(res, n, "name")
		body = r.job(n)
	}
	limit := e.budget.Limits().ValueBytes
	if err := e.budget.Value(fmt.Sprintf("%s:%d: %s's body", res.file, res.line, res.address()), migrate.ValueSize(body, limit)); err != nil {
		e.fail(err)
		return out
	}
	out.Body = marshal(body)
	out.Missing = r.missing
	return out
}

// repeated reports a resource with count or for_each, which the reader
// does not evaluate: its instances are known only to Terraform. Its names
// are there when they evaluate, for the report.
func (e *evaluator) repeated(res *resource, out migrate.Resource, s schema) migrate.Resource {
	quiet := &reading{ev: e}
	n := quiet.bodyNode("", res.body, s)
	out.ResourceGroup = quiet.resourceGroup(n)
	if out.Kind == migrate.Collection {
		out.Collection, _ = quiet.str(n, "name")
	} else {
		out.Collection, _ = quiet.str(n, "job_collection_name")
		out.Job, _ = quiet.str(n, "name")
	}
	out.Missing = []migrate.Missing{{Path: res.repeated,
		Reason: "recur does not evaluate count or for_each: write the resource once for each job, without " + res.repeated}}
	return out
}

// resourceGroup is the resource's group: opts.ResourceGroup when it is
// given (recur import's --resource-group puts every resource there),
// else resource_group_name's value. What that needs (a variable, an
// azurerm_resource_group the files do not declare) is Missing, and
// --resource-group gives it as well as --set does.
func (r *reading) resourceGroup(n *node) string {
	if rg := r.ev.opts.ResourceGroup; rg != "" {
		return rg
	}
	own := &reading{ev: r.ev}
	rg, _ := own.str(n, "resource_group_name")
	for _, m := range own.missing {
		if m.Name != "" {
			m.Reason += " (or give every resource its group with --resource-group)"
		}
		r.missing = append(r.missing, m)
	}
	return rg
}

// identity evaluates an attribute that names the resource. One the
// resource does not set is a Missing named as a reference to it, which
// --set can give.
func (r *reading) identity(res *resource, n *node, name string) string {
	if n.attrs[name] != nil {
		s, _ := r.str(n, name)
		return s
	}
	ref := res.address() + "." + name
	if s, ok := r.ev.opts.Set[ref]; ok {
		return s
	}
	r.missing = append(r.missing, migrate.Missing{Name: ref, Path: name, Reason: res.address() + " does not set " + name})
	return ""
}

// marshal writes a body as JSON, its members sorted.
func marshal(body map[string]any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	// A body's URLs and messages go to recur as they are, & and < too.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(body); err != nil {
		// The body holds strings, numbers, maps and slices alone.
		panic(err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}
