package terraform

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/migrate"
)

// definitions makes random definitions of the members recur's API
// answers with: each member present or not, of its type or, where the
// azurerm schema takes a narrower one (whole numbers, a Fixed retry
// policy, an action type that matches its url), of another; extensions
// and free-form values (a workflow's input) anywhere they may be.
type definitions struct{ r *rand.Rand }

// strs are the strings the definitions hold: templates to escape, quotes,
// newlines, names HCL keeps for itself, Unicode in normal form C.
var strs = []string{"", "plain", "${x}", "%{if y}", "$${z}", "%%{w}", "$", "a\"b\\c\nd\te", "é", "🙂", "null", "for", "Content-Type", "1st", "a b"}

func (d definitions) maybe() bool { return d.r.IntN(2) == 0 }

func (d definitions) str() string { return strs[d.r.IntN(len(strs))] }

func (d definitions) one(choices ...any) any { return choices[d.r.IntN(len(choices))] }

// number is whole mostly: the azurerm schema takes no other.
func (d definitions) number() any {
	return d.one(0.0, 1.0, 10.0, -1.0, 1.5, 1e15)
}

// put sets m[k] to the value of v, half of the time.
func (d definitions) put(m map[string]any, k string, v func() any) {
	if d.maybe() {
		m[k] = v()
	}
}

func (d definitions) numbers() any {
	out := []any{}
	for range d.r.IntN(3) {
		out = append(out, d.number())
	}
	if d.r.IntN(5) == 0 {
		out = append(out, d.str())
	}
	return out
}

func (d definitions) strings() any {
	out := []any{}
	for range d.r.IntN(3) {
		out = append(out, d.str())
	}
	return out
}

func (d definitions) textMap() any {
	out := map[string]any{}
	for range 1 + d.r.IntN(3) {
		out[d.str()] = d.str()
	}
	return out
}

// free is any JSON value, nulls within.
func (d definitions) free(depth int) any {
	switch n := d.r.IntN(7); {
	case depth > 2 || n == 0:
		return d.str()
	case n == 1:
		return nil
	case n == 2:
		return d.number()
	case n == 3:
		return d.maybe()
	case n == 4:
		return []any{d.free(depth + 1), d.free(depth + 1)}
	}
	out := map[string]any{}
	for range d.r.IntN(3) {
		out[d.str()] = d.free(depth + 1)
	}
	return out
}

func (d definitions) action(errorAction bool) map[string]any {
	a := map[string]any{"type": d.one("Http", "Https", "http", "StorageQueue", "ServiceBusQueue", "ServiceBusTopic", "Workflow")}
	d.put(a, "request", func() any {
		req := map[string]any{}
		d.put(req, "uri", func() any { return d.one("http://example.com/"+d.str(), "https://example.com/"+d.str()) })
		d.put(req, "method", func() any { return d.one("GET", "POST", "Get") })
		d.put(req, "body", func() any { return d.str() })
		d.put(req, "headers", d.textMap)
		d.put(req, "successStatusCodes", func() any { return []any{200.0, "3xx"} })
		d.put(req, "successBodyPattern", func() any { return d.str() })
		d.put(req, "authentication", func() any {
			auth := map[string]any{"type": d.one("Basic", "ClientCertificate", "ActiveDirectoryOAuth", "basic", "Other")}
			for _, k := range []string{"username", "tenant", "clientId", "audience"} {
				d.put(auth, k, func() any { return d.str() })
			}
			return auth
		})
		return req
	})
	d.put(a, "queueMessage", func() any {
		m := map[string]any{}
		for _, k := range []string{"storageAccount", "queueName", "message"} {
			d.put(m, k, func() any { return d.str() })
		}
		return m
	})
	for _, k := range []string{"serviceBusQueueMessage", "serviceBusTopicMessage"} {
		d.put(a, k, func() any {
			return map[string]any{"namespace": d.str(), "message": d.str(), "queueName": d.str(),
				"authentication":            map[string]any{"sasKeyName": d.str(), "type": "SharedAccessKey"},
				"brokeredMessageProperties": map[string]any{"messageId": d.str(), "label": d.free(2)},
				"customMessageProperties":   d.textMap()}
		})
	}
	d.put(a, "workflow", func() any {
		return map[string]any{"workflowType": d.str(), "taskQueue": d.str(), "input": d.free(0)}
	})
	d.put(a, "retryPolicy", func() any {
		p := map[string]any{}
		d.put(p, "retryType", func() any { return d.one("Fixed", "fixed", "None", "none", "Exponential") })
		d.put(p, "retryInterval", func() any { return d.one("00:00:30", "PT1M") })
		d.put(p, "retryCount", d.number)
		d.put(p, "maximumInterval", func() any { return "PT1H" })
		return p
	})
	d.put(a, "timeout", func() any { return "PT30S" })
	if !errorAction {
		d.put(a, "errorAction", func() any { return d.action(true) })
	}
	return a
}

func (d definitions) recurrence() map[string]any {
	rec := map[string]any{}
	d.put(rec, "frequency", func() any { return d.one("minute", "hour", "Day", "week", "month") })
	d.put(rec, "interval", d.number)
	d.put(rec, "count", d.number)
	d.put(rec, "endTime", func() any { return "2031-01-01T00:00:00Z" })
	d.put(rec, "timeZone", func() any { return "Europe/Berlin" })
	d.put(rec, "cron", func() any { return "0 * * * *" })
	d.put(rec, "exclusions", func() any { return []any{map[string]any{"date": "2030-12-25"}} })
	d.put(rec, "dst", func() any { return map[string]any{"gap": "skip"} })
	d.put(rec, "schedule", func() any {
		s := map[string]any{}
		for _, k := range []string{"minutes", "hours", "monthDays"} {
			d.put(s, k, d.numbers)
		}
		d.put(s, "weekDays", d.strings)
		d.put(s, "monthlyOccurrences", func() any {
			out := []any{}
			for range d.r.IntN(3) {
				o := map[string]any{}
				d.put(o, "day", func() any { return d.str() })
				d.put(o, "occurrence", d.number)
				out = append(out, o)
			}
			if d.r.IntN(5) == 0 {
				out = append(out, d.str())
			}
			return out
		})
		return s
	})
	return rec
}

func (d definitions) job() map[string]any {
	props := map[string]any{}
	d.put(props, "startTime", func() any { return d.one("2030-01-01T00:00:00Z", d.str()) })
	d.put(props, "state", func() any { return d.one("enabled", "disabled", "Enabled") })
	d.put(props, "stateReason", func() any { return d.str() })
	d.put(props, "action", func() any { return d.action(false) })
	d.put(props, "recurrence", func() any { return d.recurrence() })
	d.put(props, "overlapPolicy", func() any { return d.one("Skip", "BufferOne", "AllowAll") })
	d.put(props, "catchUpWindow", func() any { return "PT1H" })
	d.put(props, "jitter", func() any { return "PT10S" })
	d.put(props, "maxConcurrentRuns", d.number)
	d.put(props, "maxConsecutiveFaults", d.number)
	return map[string]any{"properties": props}
}

func (d definitions) collection() map[string]any {
	props := map[string]any{}
	d.put(props, "sku", func() any { return map[string]any{"name": d.one("Free", "Standard", "P20Premium")} })
	d.put(props, "state", func() any { return d.one("enabled", "Suspended", "disabled") })
	d.put(props, "quota", func() any {
		q := map[string]any{}
		d.put(q, "maxJobCount", d.number)
		d.put(q, "maxJobOccurrence", d.number)
		d.put(q, "maxRecurrence", func() any {
			m := map[string]any{}
			d.put(m, "frequency", func() any { return d.one("Minute", "hour") })
			d.put(m, "interval", d.number)
			return m
		})
		return q
	})
	def := map[string]any{"properties": props}
	d.put(def, "location", func() any { return d.one("westeurope", "northeurope") })
	d.put(def, "tags", d.textMap)
	return def
}

// TestWriteReadsBackRandom writes random definitions, a few collections
// and their jobs at a time, and reads them back: whatever the definition,
// Read gives it back exactly.
func TestWriteReadsBackRandom(t *testing.T) {
	d := definitions{rand.New(rand.NewPCG(1, 2))}
	for round := range 60 {
		var es []migrate.Exported
		for c := range 1 + d.r.IntN(2) {
			answer, err := json.Marshal(d.collection())
			require.NoError(t, err)
			coll := fmt.Sprintf("rg/c%d", c)
			es = append(es, exported(t, coll, string(answer)))
			for j := range 1 + d.r.IntN(4) {
				answer, err := json.Marshal(d.job())
				require.NoError(t, err)
				es = append(es, exported(t, fmt.Sprintf("%s/%s-%d", coll, d.str(), j), string(answer)))
			}
		}
		t.Run(fmt.Sprint(round), func(t *testing.T) { assertRoundTrip(t, es) })
	}
}
