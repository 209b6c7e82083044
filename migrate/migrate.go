// Package migrate reads the definitions Azure Scheduler's users kept, ARM
// templates (package migrate/arm) and Terraform files (package
// migrate/terraform), as the job collections and jobs recur's API takes,
// and writes recur's resources back in those forms. The readers never
// guess: whatever a file leaves to its user (a parameter without a value,
// a reference to another resource, a file that is not there, an
// expression recur does not evaluate) is a Missing of the resource it
// belongs to, which recur import reports and skips unless the user
// supplies it with --set NAME=VALUE.
package migrate

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
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
	// loop, count, an attribute the provider never had).
	Name string
	// Path is where the value is needed, in the terms of the file: a JSON
	// path in an ARM template, an attribute in a Terraform resource
	// (action_web.authentication_basic.password).
	Path string
	// Reason says why the reader could not find the value itself.
	Reason string
}

// String says what is missing and, when a value can supply it, the
// --set that does, quoted for a POSIX shell. A text from the files
// longer than a report quotes is shortened (Shorten).
func (m Missing) String() string {
	path, reason := Shorten(m.Path), Shorten(m.Reason)
	switch {
	case m.Name == "":
		return fmt.Sprintf("%s: %s", path, reason)
	case Shorten(m.Name) != m.Name:
		return fmt.Sprintf("%s needs %s: %s (too long to give with --set: change the file)", path, Shorten(m.Name), reason)
	}
	quoted := "'" + strings.ReplaceAll(m.Name+"=VALUE", "'", `'\''`) + "'"
	return fmt.Sprintf("%s needs %s: %s (supply it with --set %s)", path, m.Name, reason, quoted)
}

// Sort orders resources as they must be written, collections first, and
// by name within a kind, so that reports and writes are in a stable order.
func Sort(rs []Resource) {
	slices.SortStableFunc(rs, func(a, b Resource) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.ResourceGroup, b.ResourceGroup),
			cmp.Compare(a.Collection, b.Collection), cmp.Compare(a.Job, b.Job))
	})
}
