// Package migrate reads the definitions Azure Scheduler's users kept, ARM
// templates (package migrate/arm) and Terraform files (package
// migrate/terraform), as the job collections and jobs recur's API takes,
// and writes recur's resources back in those forms. The readers never
// guess: whatever a file leaves to its user (a parameter without a value,
// a reference to another resource, a file that is not there, an
// expression recur does not evaluate) is a Missing of the resource it
// belongs to, which recur import reports and skips unless the user
// supplies it with --set NAME=VALUE. A member recur's API does not have,
// which Azure's resource provider ignored, is left out of the body with
// a Warning (Prune).
package migrate

import (
	"cmp"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/recurhq/recur/jobs"
)

// Kind is what a resource is.
type Kind int

// The kinds of resources, in the order they must be written: a job's
// collection exists before the job.
const (
	Collection Kind = iota
	Job
)

func (k Kind) String() string {
	if k == Collection {
		return "collection"
	}
	return "job"
}

// Resource is one job collection or job a file defines.
type Resource struct {
	Kind Kind
	// ResourceGroup is the resource group the file puts the resource in,
	// "" when it names none (ARM templates never do: they deploy into one).
	ResourceGroup string
	// Collection names the collection, and the job's collection for a job.
	Collection string
	// Job names the job; "" for a collection.
	Job string
	// Body is what a PUT of the resource sends, in the shape of Azure
	// Scheduler's 2016-03-01 API: {"location": ..., "properties": {...}}
	// for a collection, {"properties": {...}} for a job. It holds the
	// secrets the files give, so it is never printed.
	Body   json.RawMessage
	Source Source
	// Label is how the file writes the resource's name, for reports when
	// the reader could not evaluate it: the template string of an ARM
	// name ("[concat(parameters('prefix'), '-nightly')]"); "" for the
	// readers whose Source.Path says it (a Terraform address).
	Label string
	// Missing lists what the resource needs from the user; a resource
	// with any is skipped.
	Missing []Missing
	// Warnings lists what the reader left out of Body (Prune).
	Warnings []Warning
}

// Name is how reports name r: "coll" or "coll/job". When the file's name
// for it is not known (the reader could not evaluate it, or it is of the
// wrong shape), it is Label, or else where r is defined (Source.Path: a
// Terraform address), rather than a "/" the user cannot place.
func (r Resource) Name() string {
	switch {
	case r.Kind == Collection && r.Collection != "":
		return r.Collection
	case r.Kind == Job && r.Collection != "" && r.Job != "":
		return r.Collection + "/" + r.Job
	case r.Label != "":
		return r.Label
	}
	return r.Source.Path
}

// Source is where a resource is defined.
type Source struct {
	File string
	// Path is where in File: a JSON path for an ARM template
	// ("resources[0].resources[1]"), a resource address for Terraform
	// ("azurerm_scheduler_job.web").
	Path string
	// Line is the line of Path in File, 0 when unknown.
	Line int
}

func (s Source) String() string {
	if s.Line > 0 {
		return fmt.Sprintf("%s:%d (%s)", s.File, s.Line, s.Path)
	}
	return s.File + " (" + s.Path + ")"
}

// Missing is one value a resource needs from its user.
type Missing struct {
	// Name is what --set NAME=VALUE supplies: an ARM parameter's name, a
	// Terraform variable (var.region), a reference to another resource
	// (azurerm_storage_account.main.primary_access_key), a file function
	// (file("certs/client.pfx")), or the text of an expression recur does
	// not evaluate; "" when no value can: the file needs an edit (a copy
	// loop, count, an attribute the provider never had), or a flag gives
	// it (Flag).
	Name string
	// Key, when not "", is another NAME for --set that supplies the
	// value: where in the file it is needed (an ARM template's JSON path),
	// offered when it is shorter than Name.
	Key string
	// Flag, when not "", is the flag of recur import that gives the
	// value instead of --set: --resource-group.
	Flag string
	// Path is where the value is needed, in the terms of the file: a JSON
	// path in an ARM template, an attribute in a Terraform resource
	// (action_web.authentication_basic.password).
	Path string
	// Reason says why the reader could not find the value itself.
	Reason string
}

// String says what is missing and, when a value can supply it, the
// --set that does, quoted for a POSIX shell, with the shorter of Name and
// Key; or the flag that gives it. A text from the files longer than a
// report quotes is shortened (Shorten).
func (m Missing) String() string {
	path, reason := Shorten(m.Path), Shorten(m.Reason)
	set := m.Name
	if m.Key != "" && len(m.Key) < len(set) {
		set = m.Key
	}
	switch {
	case m.Flag != "":
		return fmt.Sprintf("%s needs %s: %s (give %s)", path, m.Flag, reason, m.Flag)
	case m.Name == "":
		return fmt.Sprintf("%s: %s", path, reason)
	case Shorten(set) != set:
		return fmt.Sprintf("%s needs %s: %s (too long to give with --set: change the file)", path, Shorten(m.Name), reason)
	}
	quoted := "'" + strings.ReplaceAll(set+"=VALUE", "'", `'\''`) + "'"
	return fmt.Sprintf("%s needs %s: %s (supply it with --set %s)", path, Shorten(m.Name), reason, quoted)
}

// Warning is a member a reader left out of a resource's body.
type Warning struct {
	// Path is the member's JSON path in the body, as the API names it:
	// properties.action.request.retryPolicy.
	Path string
	// Message says why and what the member probably meant.
	Message string
}

// String says what was left out and why; a text from the files longer
// than a report quotes is shortened (Shorten).
func (w Warning) String() string { return Shorten(w.Path) + ": " + Shorten(w.Message) }

// Prune takes out of each resource's body the members that recur's API
// would refuse as unknown (jobs.PruneUnknown), each with a Warning whose
// message is ignored, why the reader leaves it out, ending in "this"
// ("Azure ignored this", for an ARM template Azure deployed without it),
// then what it probably meant ("; did you mean X?") or " member". What
// else the API refuses, a member given twice or null in an array, stays
// in the body: Azure did not ignore those.
func Prune(rs []Resource, ignored string) {
	for i := range rs {
		r := &rs[i]
		if len(r.Body) == 0 {
			continue
		}
		t := reflect.TypeFor[jobs.Job]()
		if r.Kind == Collection {
			t = reflect.TypeFor[jobs.Collection]()
		}
		body, unknown := jobs.PruneUnknown(r.Body, t)
		r.Body = body
		for _, u := range unknown {
			msg := ignored + " member"
			if u.Meant != "" {
				msg = ignored + "; did you mean " + u.Meant + "?"
			}
			r.Warnings = append(r.Warnings, Warning{Path: u.Path, Message: msg})
		}
	}
}

// Sort orders resources as they must be written, collections first, and
// by name within a kind, so that reports and writes are in a stable order.
func Sort(rs []Resource) {
	slices.SortStableFunc(rs, func(a, b Resource) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.ResourceGroup, b.ResourceGroup),
			cmp.Compare(a.Collection, b.Collection), cmp.Compare(a.Job, b.Job))
	})
}
