package terraform

import (
	"math"
	"strings"

	"github.com/hashicorp/hcl/v2/hclwrite"
)

// hclBlock writes a definition's members as the azurerm attributes and
// blocks the reader maps to them: the reader's mapping turned around. A
// member of the wrong type for its attribute (a number that is not whole,
// a list with a string among numbers) is left out: recur_properties
// carries it, as it carries every member with no attribute.
type hclBlock struct {
	w    *writer
	body *hclwrite.Body
}

func (f hclBlock) set(name string, v any) { f.body.SetAttributeRaw(name, f.w.tokens(v)) }

// block opens a nested block, after a blank line as terraform fmt keeps
// them.
func (f hclBlock) block(name string) hclBlock {
	f.body.AppendNewline()
	return hclBlock{f.w, f.body.AppendNewBlock(name, nil).Body()}
}

// object returns the member of m that is an object, nil for none.
func object(m map[string]any, member string) map[string]any {
	o, _ := m[member].(map[string]any)
	return o
}

func (f hclBlock) text(name string, m map[string]any, member string) {
	if s, ok := m[member].(string); ok {
		f.set(name, s)
	}
}

func (f hclBlock) number(name string, m map[string]any, member string) {
	if whole(m[member]) {
		f.set(name, m[member])
	}
}

// whole says v is a number the reader takes: whole, and exact in a
// float64, as every number of recur's definitions is.
func whole(v any) bool {
	n, ok := v.(float64)
	return ok && n == math.Trunc(n) && math.Abs(n) <= 1<<53
}

// list writes a list attribute when every element is of the kind the
// attribute takes; the reader drops an empty one.
func (f hclBlock) list(name string, m map[string]any, member string, elem func(any) bool) {
	l, ok := m[member].([]any)
	if !ok || len(l) == 0 {
		return
	}
	for _, v := range l {
		if !elem(v) {
			return
		}
	}
	f.set(name, l)
}

func isString(v any) bool {
	_, ok := v.(string)
	return ok
}

// textMap writes a map of strings (headers, tags); the reader drops an
// empty one.
func (f hclBlock) textMap(name string, m map[string]any, member string) {
	o := object(m, member)
	if len(o) == 0 {
		return
	}
	for _, v := range o {
		if !isString(v) {
			return
		}
	}
	f.set(name, o)
}

// collection writes a collection's members but its name and resource
// group.
func (f hclBlock) collection(def, props map[string]any) {
	f.text("location", def, "location")
	f.text("sku", object(props, "sku"), "name")
	f.text("state", props, "state")
	f.textMap("tags", def, "tags")
	if q := object(props, "quota"); q != nil {
		qf := f.block("quota")
		qf.number("max_job_count", q, "maxJobCount")
		if m := object(q, "maxRecurrence"); m != nil {
			if azurermFrequency(m["frequency"]) {
				qf.text("max_recurrence_frequency", m, "frequency")
			}
			qf.number("max_recurrence_interval", m, "interval")
		}
	}
}

// job writes a job's properties.
func (f hclBlock) job(props map[string]any) {
	f.text("state", props, "state")
	f.text("start_time", props, "startTime")
	if a := object(props, "action"); a != nil {
		made := f.action(a, "action_web", "action_storage_queue")
		if e := object(a, "errorAction"); e != nil {
			made = f.action(e, "error_action_web", "error_action_storage_queue") || made
		}
		// The reader takes a retry block only for an action it makes;
		// without one it makes a policy of None.
		if p := object(a, "retryPolicy"); made && p != nil {
			if typ, _ := p["retryType"].(string); strings.EqualFold(typ, "Fixed") {
				rf := f.block("retry")
				rf.text("interval", p, "retryInterval")
				rf.number("count", p, "retryCount")
			}
		}
	}
	if rec := object(props, "recurrence"); rec != nil {
		f.block("recurrence").recurrence(rec)
	}
}

// action writes an HTTP(S) or storage queue action as the block web or
// queue, and says whether it did.
func (f hclBlock) action(a map[string]any, web, queue string) bool {
	typ, _ := a["type"].(string)
	switch {
	case (strings.EqualFold(typ, "Http") || strings.EqualFold(typ, "Https")) && object(a, "request") != nil:
		f.block(web).request(object(a, "request"))
	case strings.EqualFold(typ, "StorageQueue") && object(a, "queueMessage") != nil:
		q, qf := object(a, "queueMessage"), f.block(queue)
		qf.text("storage_account_name", q, "storageAccount")
		qf.text("storage_queue_name", q, "queueName")
		qf.text("sas_token", q, "sasToken")
		qf.text("message", q, "message")
	default:
		return false
	}
	return true
}

func (f hclBlock) request(req map[string]any) {
	f.text("url", req, "uri")
	f.text("method", req, "method")
	// The reader, as the provider, drops an empty body.
	if body, ok := req["body"].(string); ok && body != "" {
		f.set("body", body)
	}
	f.textMap("headers", req, "headers")
	auth := object(req, "authentication")
	switch typ, _ := auth["type"].(string); {
	case strings.EqualFold(typ, "Basic"):
		af := f.block("authentication_basic")
		af.text("username", auth, "username")
		af.text("password", auth, "password")
	case strings.EqualFold(typ, "ClientCertificate"):
		af := f.block("authentication_certificate")
		af.text("pfx", auth, "pfx")
		af.text("password", auth, "password")
	case strings.EqualFold(typ, "ActiveDirectoryOAuth"):
		af := f.block("authentication_active_directory")
		af.text("tenant_id", auth, "tenant")
		af.text("client_id", auth, "clientId")
		af.text("secret", auth, "secret")
		af.text("audience", auth, "audience")
	}
}

func (f hclBlock) recurrence(rec map[string]any) {
	if azurermFrequency(rec["frequency"]) {
		f.text("frequency", rec, "frequency")
	}
	f.number("interval", rec, "interval")
	f.number("count", rec, "count")
	f.text("end_time", rec, "endTime")
	s := object(rec, "schedule")
	f.list("minutes", s, "minutes", whole)
	f.list("hours", s, "hours", whole)
	f.list("week_days", s, "weekDays", isString)
	f.list("month_days", s, "monthDays", whole)
	occurrences, _ := s["monthlyOccurrences"].([]any)
	for _, o := range occurrences {
		if !isObject(o) {
			return
		}
	}
	for _, o := range occurrences {
		of := f.block("monthly_occurrences")
		of.text("day", o.(map[string]any), "day")
		of.number("occurrence", o.(map[string]any), "occurrence")
	}
}

// azurermFrequency reports whether v is a frequency the provider's schema
// takes. recur's Second is not: it goes to recur_properties, with cron
// and the other extensions, where the read-back's diff puts what a block
// does not say.
func azurermFrequency(v any) bool {
	f, _ := v.(string)
	return f != "" && !strings.EqualFold(f, "Second")
}
