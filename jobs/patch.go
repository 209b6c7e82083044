package jobs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// JSON merge patches of definitions. A job's PATCH is merged by its
// workflow, which alone holds the definition's secrets, so that the PATCH
// is one update; the code is deterministic for that reason: it visits
// members in sorted order.

// CodeInvalidContent is a body, or a definition patched, that does not
// decode into a definition.
const CodeInvalidContent = "InvalidRequestContent"

// PatchJob applies a JSON merge patch to a job's definition. An
// authentication object the patch gives with another type replaces the
// old one instead of merging into it: a Basic password must never become
// a certificate's password. One of the same type merges (a new username
// keeps the password).
func PatchJob(current Job, patch json.RawMessage) (Job, error) {
	return MergePatch(replacedAuthentication(current, patch), patch)
}

// replacedAuthentication drops from current each authentication object
// the patch gives with another type.
func replacedAuthentication(current Job, patch json.RawMessage) Job {
	var p struct {
		Properties struct {
			Action struct {
				Request     struct{ Authentication *Authentication }
				ErrorAction struct {
					Request struct{ Authentication *Authentication }
				}
			}
		}
	}
	if json.Unmarshal(patch, &p) != nil || current.Properties.Action == nil {
		return current
	}
	action := *current.Properties.Action
	replace := func(req *HTTPRequest, given *Authentication) *HTTPRequest {
		if req == nil || req.Authentication == nil || given == nil || strings.EqualFold(given.Type, req.Authentication.Type) {
			return req
		}
		r := *req
		r.Authentication = nil
		return &r
	}
	action.Request = replace(action.Request, p.Properties.Action.Request.Authentication)
	if action.ErrorAction != nil {
		e := *action.ErrorAction
		e.Request = replace(e.Request, p.Properties.Action.ErrorAction.Request.Authentication)
		action.ErrorAction = &e
	}
	current.Properties.Action = &action
	return current
}

// MergePatch applies a JSON merge patch to a definition.
func MergePatch[T any](current T, patch json.RawMessage) (T, error) {
	var zero T
	data, err := json.Marshal(current)
	if err != nil {
		return zero, err
	}
	doc, err := generic(data)
	if err != nil {
		return zero, err
	}
	p, err := generic(patch)
	if err != nil {
		return zero, invalidContent("", "invalid JSON: "+err.Error())
	}
	merged, err := json.Marshal(mergePatch(doc, p, nil, false))
	if err != nil {
		return zero, err
	}
	var out T
	if err := json.Unmarshal(merged, &out); err != nil {
		return zero, ContentError(err, reflect.TypeFor[T]())
	}
	return out, nil
}

// generic decodes JSON into maps and slices, numbers kept as written:
// float64 would round large integers, and refuse one out of its range
// without naming the field that the definition's own decoding names.
func generic(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// mergePatch is RFC 7386: objects merge member by member, null deletes,
// anything else replaces. A patch member stands for the members of its
// name in any letter case, as the body of a PUT is read: it replaces them
// under its own spelling. In a workflow input (exact) names are matched
// as written. path is the member names down to doc.
func mergePatch(doc, patch any, path []string, exact bool) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	d, ok := doc.(map[string]any)
	if !ok {
		d = map[string]any{}
	}
	for _, k := range slices.Sorted(maps.Keys(p)) {
		v := p[k]
		old, had := d[k]
		if !exact {
			for _, name := range slices.Sorted(maps.Keys(d)) {
				if name != k && strings.EqualFold(name, k) {
					if !had {
						old, had = d[name], true
					}
					delete(d, name)
				}
			}
		}
		if v == nil {
			delete(d, k)
			continue
		}
		at := append(path[:len(path):len(path)], k)
		d[k] = mergePatch(old, v, at, exact || IsWorkflowInput(at))
	}
	return d
}

// workflowInputs are the paths of workflow actions' inputs, whose members
// keep their letter case: they are the user's own JSON, passed on as
// written.
var workflowInputs = [][]string{
	{"properties", "action", "workflow", "input"},
	{"properties", "action", "errorAction", "workflow", "input"},
}

// IsWorkflowInput says whether the member names of path lead to a
// workflow action's input (in any letter case, as the definition's
// fields match).
func IsWorkflowInput(path []string) bool {
	for _, input := range workflowInputs {
		if len(path) == len(input) && slices.EqualFunc(path, input, strings.EqualFold) {
			return true
		}
	}
	return false
}

// ContentError is the answer to JSON that does not decode into a
// definition of type t: a wrong type names its field by its JSON path.
func ContentError(err error, t reflect.Type) *Error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		path := jsonFieldPath(t, typeErr.Field)
		return invalidContent(path, fmt.Sprintf("%s: a JSON %s is not allowed here", path, typeErr.Value))
	}
	return invalidContent("", "invalid JSON: "+err.Error())
}

func invalidContent(target, message string) *Error {
	return &Error{Code: CodeInvalidContent, Target: target, Message: message}
}

// jsonFieldPath returns the JSON path of field, an UnmarshalTypeError's
// Field in a value of type t. encoding/json names an embedded struct
// there by its Go type (properties.action.ActionSpec.retryPolicy), where
// the JSON has its fields one level up (properties.action.retryPolicy).
func jsonFieldPath(t reflect.Type, field string) string {
	var path []string
	for name := range strings.SplitSeq(field, ".") {
		for t != nil && (t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map) {
			t = t.Elem()
		}
		if t == nil || t.Kind() != reflect.Struct {
			t = nil
			path = append(path, name)
			continue
		}
		if f, ok := t.FieldByName(name); ok && f.Anonymous && f.Tag.Get("json") == "" {
			t = f.Type
			continue
		}
		t = jsonFieldType(t, name)
		path = append(path, name)
	}
	return strings.Join(path, ".")
}

// jsonFieldType returns the type of t's field (its own or promoted) that
// JSON names name, or nil.
func jsonFieldType(t reflect.Type, name string) reflect.Type {
	for _, f := range reflect.VisibleFields(t) {
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && tag == "" || !f.IsExported() {
			continue
		}
		if tag == name || tag == "" && f.Name == name {
			return f.Type
		}
	}
	return nil
}
