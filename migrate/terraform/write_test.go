package terraform

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/migrate"
)

// exported makes an Exported of an answer of recur's API, as recur export
// does: kind is "collection" or "job", name "rg/coll" or "rg/coll/job".
func exported(t *testing.T, name, answer string) migrate.Exported {
	t.Helper()
	parts := strings.SplitN(name, "/", 3)
	r := migrate.Resource{Kind: migrate.Collection, ResourceGroup: parts[0], Collection: parts[1]}
	if len(parts) == 3 {
		r.Kind, r.Job = migrate.Job, parts[2]
	}
	e, err := migrate.ForExport(r, json.RawMessage(answer), migrate.ExportOptions{})
	require.NoError(t, err, name)
	return e
}

// written is what Write wrote and what Read read back of it.
type written struct {
	src  string
	vars map[string]string // each variable's value given to Read, by name
	read []migrate.Resource
}

// writeAndRead writes es into a directory of its own and reads it back,
// giving each secret's variable the value "secret of NAME".
func writeAndRead(t *testing.T, es []migrate.Exported) written {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, es))
	w := written{src: buf.String(), vars: map[string]string{}}
	for name := range variables(t, w.src) {
		w.vars[name] = "secret of " + name
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.tf"), buf.Bytes(), 0o600))
	rs, err := Read([]string{dir}, Options{Vars: w.vars})
	require.NoError(t, err, "%s", w.src)
	w.read = rs
	return w
}

// variables returns the variable blocks of src, by name: their
// attributes' source text, but the description's value.
func variables(t *testing.T, src string) map[string]map[string]string {
	t.Helper()
	f, diags := hclsyntax.ParseConfig([]byte(src), "main.tf", hcl.InitialPos)
	require.False(t, diags.HasErrors(), "%s\n%s", diags, src)
	out := map[string]map[string]string{}
	for _, b := range f.Body.(*hclsyntax.Body).Blocks {
		if b.Type != "variable" {
			continue
		}
		attrs := map[string]string{}
		for name, a := range b.Body.Attributes {
			attrs[name] = string(a.Expr.Range().SliceBytes([]byte(src)))
			if name == "description" {
				v, diags := a.Expr.Value(nil)
				require.False(t, diags.HasErrors(), "%s", diags)
				attrs[name] = v.AsString()
			}
		}
		out[b.Labels[0]] = attrs
	}
	return out
}

// want is the body Read should give for e: its definition, each secret
// the value its variable was given.
func (w written) want(t *testing.T, e migrate.Exported) string {
	t.Helper()
	byPlace := map[string]string{}
	for name, attrs := range variables(t, w.src) {
		byPlace[attrs["description"]] = name
	}
	var def map[string]any
	require.NoError(t, json.Unmarshal(e.Body, &def))
	for _, s := range e.Secrets {
		name, ok := byPlace[s.String()+" of job "+e.Name()]
		require.True(t, ok, "no variable for %s of %s in\n%s", s, e.Name(), w.src)
		s.Set(def, w.vars[name])
	}
	out, err := json.Marshal(def)
	require.NoError(t, err)
	return string(out)
}

// assertRoundTrip checks that Read gives back es: the same kinds, names
// and resource groups, and JSON-equal bodies.
func assertRoundTrip(t *testing.T, es []migrate.Exported) written {
	t.Helper()
	w := writeAndRead(t, es)
	require.Len(t, w.read, len(es), "%s", w.src)
	for _, e := range es {
		var got *migrate.Resource
		for i, r := range w.read {
			if r.Kind == e.Kind && r.Collection == e.Collection && r.Job == e.Job {
				got = &w.read[i]
			}
		}
		require.NotNil(t, got, "%s is not read back from\n%s", e.Name(), w.src)
		assert.Empty(t, got.Missing, "%s in\n%s", e.Name(), w.src)
		assert.Equal(t, e.ResourceGroup, got.ResourceGroup, e.Name())
		assert.JSONEq(t, w.want(t, e), string(got.Body), "%s in\n%s", e.Name(), w.src)
	}
	return w
}

// The answers of the tests: as recur's API gives them, without secrets.
const (
	fullCollection = `{"id": "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/reports",
		"name": "reports", "type": "Microsoft.Scheduler/jobCollections", "location": "westeurope",
		"tags": {"env": "prod", "cost-center": "42", "a b": "${x}"},
		"properties": {"sku": {"name": "Standard"}, "state": "enabled",
			"quota": {"maxJobCount": 50, "maxJobOccurrence": 7, "maxRecurrence": {"frequency": "Minute", "interval": 1}}}}`
	azurermJob = `{"properties": {"startTime": "2030-01-01T00:00:00Z", "state": "enabled",
		"action": {"type": "Http",
			"request": {"uri": "http://example.com/run", "method": "POST", "body": "hello ${name} %{if} $${x} \"q\" \\ \n",
				"headers": {"Content-Type": "text/plain", "X-Trace": "${trace}", "for": "1", "null": "2"},
				"authentication": {"type": "Basic", "username": "u"}},
			"retryPolicy": {"retryType": "Fixed", "retryInterval": "00:01:00", "retryCount": 3}},
		"recurrence": {"frequency": "week", "interval": 2, "count": 10, "endTime": "2031-01-01T00:00:00Z",
			"schedule": {"minutes": [0, 30], "hours": [6, 18], "weekDays": ["monday", "friday"], "monthDays": [1, -1]}},
		"status": {"executionCount": 3, "failureCount": 0, "faultedCount": 0}}}`
)

// jobAnswers are job answers, by name: every azurerm field, every extension.
var jobAnswers = map[string]string{
	"azurerm": azurermJob,
	"certificate": `{"properties": {"action": {"type": "Https",
		"request": {"uri": "https://example.com", "method": "GET",
			"authentication": {"type": "ClientCertificate", "certificateThumbprint": "AB", "certificateSubjectName": "CN=x",
				"certificateExpirationDate": "2030-01-01T00:00:00Z"}},
		"retryPolicy": {"retryType": "fixed", "retryInterval": "00:00:30", "retryCount": 4}},
		"recurrence": {"frequency": "hour"}}}`,
	"oauth": `{"properties": {"action": {"type": "Https",
		"request": {"uri": "https://example.com", "method": "PUT", "body": "",
			"authentication": {"type": "ActiveDirectoryOAuth", "tenant": "t.example", "clientId": "c", "audience": "https://aud.example/"}},
		"retryPolicy": {"retryType": "none"}}}}`,
	"oauth-default-audience": `{"properties": {"state": "disabled", "stateReason": "paused by ops",
		"action": {"type": "Http", "request": {"uri": "http://example.com", "method": "GET"},
			"errorAction": {"type": "Https", "request": {"uri": "https://example.com/err", "method": "POST",
				"authentication": {"type": "ActiveDirectoryOAuth", "tenant": "t", "clientId": "c"}}}}}}`,
	"storage-queue": `{"properties": {"action": {"type": "StorageQueue",
		"queueMessage": {"storageAccount": "acct", "queueName": "work", "message": "go"},
		"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT1M"},
		"errorAction": {"type": "StorageQueue", "queueMessage": {"storageAccount": "acct", "queueName": "errors", "message": "failed"}}},
		"recurrence": {"frequency": "month", "interval": 1,
			"schedule": {"monthlyOccurrences": [{"day": "sunday", "occurrence": 1}, {"day": "friday", "occurrence": -1}, {"day": "monday"}]}}}}`,
	"extensions": `{"properties": {"startTime": "2030-01-01T08:00:00", "state": "enabled",
		"overlapPolicy": "BufferOne", "catchUpWindow": "PT2H", "jitter": "PT30S", "maxConcurrentRuns": 2, "maxConsecutiveFaults": 5,
		"action": {"type": "Https", "timeout": "PT2M",
			"request": {"uri": "https://example.com/x", "method": "POST", "successStatusCodes": [200, "3xx"], "successBodyPattern": "^ok$"},
			"retryPolicy": {"retryType": "exponential", "retryInterval": "PT30S", "retryCount": 5, "maximumInterval": "PT10M"},
			"errorAction": {"type": "Http", "request": {"uri": "http://example.com/e", "method": "POST"},
				"retryPolicy": {"retryType": "none"}}},
		"recurrence": {"frequency": "day", "timeZone": "Europe/Berlin",
			"schedule": {"hours": [2], "minutes": [30]},
			"exclusions": [{"date": "2030-12-25"}, {"from": "2030-07-01", "to": "2030-07-31"}],
			"dst": {"gap": "skip", "repeat": "first"}}}}`,
	"cron": `{"properties": {"action": {"type": "Http", "request": {"uri": "https://example.com", "method": "GET"}},
		"recurrence": {"cron": "*/5 * * * 1-5", "timeZone": "America/New_York", "schedule": {}}}}`,
	"seconds": `{"properties": {"action": {"type": "Http", "request": {"uri": "https://example.com", "method": "GET"}},
		"recurrence": {"frequency": "second", "interval": 10, "schedule": {"hours": [9, 17]}}}}`,
	"cron-seconds": `{"properties": {"action": {"type": "Http", "request": {"uri": "https://example.com", "method": "GET"}},
		"recurrence": {"cron": "*/10 * 9-17 * * MON-FRI"}}}`,
	"rrule": `{"properties": {"action": {"type": "Http", "request": {"uri": "https://example.com", "method": "GET"}},
		"recurrence": {"rrule": "DTSTART;TZID=Europe/Berlin:20300101T090000\nRRULE:FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=3\nEXDATE;TZID=Europe/Berlin:20300303T090000"}}}`,
	"rules": `{"properties": {"action": {"type": "Http", "request": {"uri": "https://example.com", "method": "GET"}},
		"recurrence": {"timeZone": "Europe/Berlin", "count": 20,
			"rules": [{"frequency": "week", "schedule": {"weekDays": ["monday", "friday"], "hours": [9], "minutes": [0]}},
				{"cron": "30 17 * * 1-5"}, {"rrule": "FREQ=WEEKLY;BYDAY=SA;BYHOUR=10;BYMINUTE=0;BYSECOND=0"}]}}}`,
	"service-bus": `{"properties": {"action": {"type": "ServiceBusQueue",
		"serviceBusQueueMessage": {"namespace": "my-bus", "queueName": "q", "message": "m", "transportType": "AMQP",
			"authentication": {"sasKeyName": "send", "type": "SharedAccessKey"},
			"brokeredMessageProperties": {"messageId": "${id}", "timeToLive": "PT1H", "forcePersistence": true, "label": null},
			"customMessageProperties": {"a b": "c", "x-y": "%{z}"}}},
		"recurrence": {"frequency": "minute", "interval": 15}}}`,
	"service-bus-topic-with-error-web": `{"properties": {"action": {"type": "ServiceBusTopic",
		"serviceBusTopicMessage": {"namespace": "my-bus", "topicPath": "t/sub", "message": "m",
			"authentication": {"sasKeyName": "send", "type": "SharedAccessKey"}},
		"retryPolicy": {"retryType": "fixed", "retryCount": 2},
		"errorAction": {"type": "Http", "request": {"uri": "http://example.com/e", "method": "POST"}}}}}`,
	"workflow": `{"properties": {"action": {"type": "Workflow",
		"workflow": {"namespace": "default", "workflowType": "Nightly", "taskQueue": "reports",
			"input": {"day": null, "list": [1, 2.5, {"k": null}], "for": {"if": true}, "":"empty key", "1x": "y"}}}}}`,
	"no-retry-policy": `{"properties": {"action": {"type": "Http", "request": {"uri": "https://example.com/scheme-is-https", "method": "GET"}}}}`,
	"one-time": `{"properties": {"startTime": "2030-01-01T00:00:00Z",
		"action": {"type": "Http", "request": {"uri": "http://example.com", "method": "GET"}, "retryPolicy": {"retryType": "Fixed"}}}}`,
	"no-interval": `{"properties": {"action": {"type": "Http", "request": {"uri": "http://example.com", "method": "GET"}},
		"recurrence": {"frequency": "hour", "count": 0, "schedule": {"minutes": [], "hours": [1.5]}}}}`,
}

func TestWriteReadsBack(t *testing.T) {
	es := []migrate.Exported{exported(t, "rg/reports", fullCollection)}
	for name, answer := range jobAnswers {
		es = append(es, exported(t, "rg/reports/"+name, answer))
	}
	// A collection of another resource group, a collection the export
	// does not hold, names that are not identifiers, and one job name in
	// three collections.
	es = append(es,
		exported(t, "other-rg/1st coll.x", `{"location": "northeurope", "properties": {}}`),
		exported(t, "other-rg/1st coll.x/nightly run+β", azurermJob),
		exported(t, "other-rg/1st coll.x/azurerm", jobAnswers["oauth"]),
		exported(t, "rg/not-exported/azurerm", jobAnswers["storage-queue"]),
	)
	w := assertRoundTrip(t, es)

	// Terraform's own rules: every identifier is one, every name unique.
	f, diags := hclsyntax.ParseConfig([]byte(w.src), "main.tf", hcl.InitialPos)
	require.False(t, diags.HasErrors(), "%s", diags)
	seen := map[string]bool{}
	for _, b := range f.Body.(*hclsyntax.Body).Blocks {
		address := strings.Join(b.Labels, ".")
		require.False(t, seen[address], "%s twice", address)
		seen[address] = true
		require.True(t, hclsyntax.ValidIdentifier(b.Labels[len(b.Labels)-1]), address)
	}
	assert.True(t, seen["azurerm_scheduler_job_collection.reports"])
	assert.True(t, seen["azurerm_scheduler_job_collection._1st_coll_x"])
	assert.True(t, seen["azurerm_scheduler_job.nightly_run_"])
	assert.True(t, seen["azurerm_scheduler_job.reports_azurerm"])
	assert.True(t, seen["azurerm_scheduler_job.not-exported_azurerm"])
	assert.True(t, seen["azurerm_scheduler_job._1st_coll_x_azurerm"])

	// Each secret is a sensitive string variable without a default.
	vars := variables(t, w.src)
	assert.Len(t, vars, 13)
	for name, attrs := range vars {
		assert.Equal(t, map[string]string{"type": "string", "sensitive": "true", "description": attrs["description"]}, attrs, name)
	}
	assert.Contains(t, vars, "reports_azurerm_password")
	assert.Contains(t, vars, "reports_oauth_default_audience_errorAction_secret")
	assert.Contains(t, vars, "reports_storage_queue_queueMessage_sasToken")
	assert.Contains(t, vars, "reports_service_bus_serviceBusQueueMessage_sasKey")
	assert.Contains(t, vars, "reports_certificate_pfx")
	assert.Contains(t, vars, "reports_certificate_password")
}

// TestWriteNormalizes: what HCL and the provider change in every file
// comes back changed, as Write's documentation says.
func TestWriteNormalizes(t *testing.T) {
	es := []migrate.Exported{
		exported(t, "rg/c", `{"location": "West Europe", "tags": {}, "properties": {"state": "enabled"}}`),
		exported(t, "rg/c/j", `{"properties": {"action": {"type": "Http", "request": {"uri": "http://example.com", "method": "GET", "body": "cafe\u0301"}}}}`),
	}
	w := writeAndRead(t, es)
	require.Len(t, w.read, 2)
	// The state as Azure's enum spells it (migrate.ForExport), whatever the case of recur's answer.
	assert.JSONEq(t, `{"location": "westeurope", "properties": {"state": "Enabled"}}`, string(w.read[0].Body))
	assert.Equal(t, "café", member(t, w.read[1].Body, "properties", "action", "request", "body"))
}

// TestWriteLeavesSecretsOut: a definition that holds a secret, which no
// answer of recur's does, is written without it.
func TestWriteLeavesSecretsOut(t *testing.T) {
	e := exported(t, "rg/c/j", `{"properties": {"action": {"type": "Https",
		"request": {"uri": "https://example.com", "method": "GET", "authentication": {"type": "Basic", "username": "u"}},
		"errorAction": {"type": "ServiceBusQueue", "serviceBusQueueMessage": {"namespace": "my-bus", "queueName": "q", "message": "m",
			"authentication": {"sasKeyName": "send"}}}}}}`)
	e.Secrets[0].Set(e.Definition, "hunter2")
	e.Secrets[1].Set(e.Definition, "sas-key-value")
	w := writeAndRead(t, []migrate.Exported{e})
	assert.NotContains(t, w.src, "hunter2")
	assert.NotContains(t, w.src, "sas-key-value")
	assert.Contains(t, w.src, "password = var.c_j_password")
	assert.Contains(t, w.src, "sasKey     = var.c_j_errorAction_serviceBusQueueMessage_sasKey")
	assert.Equal(t, "secret of c_j_password", member(t, w.read[0].Body, "properties", "action", "request", "authentication", "password"))
}

// TestWriteRefuses what no file can hold: Write says so rather than write
// a file that reads back as something else.
func TestWriteRefuses(t *testing.T) {
	for answer, want := range map[string]string{
		`{"properties": {"state": null}}`:                    "job c/j: Terraform cannot hold the definition exactly",
		`{"properties": {}, "location": "westeurope"}`:       "job c/j: the definition's member location has no place in Terraform",
		`{"properties": "none"}`:                             "job c/j: the definition has no properties object",
		`{"properties": {"recurrence": {"interval": null}}}`: "job c/j: Terraform cannot hold the definition exactly",
	} {
		err := Write(io.Discard, []migrate.Exported{exported(t, "rg/c/j", answer)})
		require.ErrorContains(t, err, want, answer)
	}
}

// TestWriteExampleInAzurermAlone writes what the reader reads of the
// provider's own examples: every member has its azurerm attribute, so no
// resource needs recur_properties.
func TestWriteExampleInAzurermAlone(t *testing.T) {
	rs, err := Read([]string{example(t, "azurerm012")}, Options{
		Set: map[string]string{"azurerm_storage_account.example.primary_access_key": sasToken}})
	require.NoError(t, err)
	var es []migrate.Exported
	for _, r := range rs {
		e, err := migrate.ForExport(migrate.Resource{Kind: r.Kind, ResourceGroup: r.ResourceGroup, Collection: r.Collection, Job: r.Job}, r.Body, migrate.ExportOptions{})
		require.NoError(t, err)
		es = append(es, e)
	}
	w := assertRoundTrip(t, es)
	assert.NotContains(t, w.src, recurProperties+" =")
	assert.Len(t, variables(t, w.src), 6, "basic, certificate (2), active directory, storage queues (2)")
}

// TestWriteLeavesSigningSecretsToVariables: a request's signing secrets,
// which an answer only counts, are each a variable in their list, and read
// back as the values given.
func TestWriteLeavesSigningSecretsToVariables(t *testing.T) {
	e := exported(t, "rg/c/j", `{"properties": {"action": {"type": "Https",
		"request": {"uri": "https://example.com", "method": "POST", "signing": {"secretCount": 2}}}}}`)
	w := writeAndRead(t, []migrate.Exported{e})
	assert.Contains(t, w.src, "var.c_j_signing_secrets_0")
	assert.Contains(t, w.src, "var.c_j_signing_secrets_1")
	assert.NotContains(t, w.src, "secretCount")
	assert.Equal(t, []any{"secret of c_j_signing_secrets_0", "secret of c_j_signing_secrets_1"},
		member(t, w.read[0].Body, "properties", "action", "request", "signing", "secrets"))
}

// TestWriteLeavesSecondsToRecurProperties: recur's Second, in a job's
// recurrence or a collection's maxRecurrence, and a six-field cron are
// no values of the provider's schema: they are in recur_properties, as
// cron and timeZone are, and read back as they were.
func TestWriteLeavesSecondsToRecurProperties(t *testing.T) {
	es := []migrate.Exported{
		exported(t, "rg/c", `{"location": "westeurope", "properties": {"sku": {"name": "Standard"},
			"quota": {"maxRecurrence": {"frequency": "Second", "interval": 10}}}}`),
		exported(t, "rg/c/j", jobAnswers["seconds"]),
		exported(t, "rg/c/k", jobAnswers["cron-seconds"]),
	}
	w := assertRoundTrip(t, es)
	require.NotRegexp(t, `recurrence \{[^}]*frequency`, w.src, "no frequency in a recurrence block")
	require.NotContains(t, w.src, "max_recurrence_frequency")
	require.Regexp(t, `(?s)recur_properties = \{.*frequency *= "second"`, w.src)
	require.Regexp(t, `(?s)recur_properties = \{.*frequency *= "Second"`, w.src)
	require.Contains(t, w.src, `"*/10 * 9-17 * * MON-FRI"`)
}

// TestWriteLeavesRRuleAndRulesToRecurProperties: an rrule and a list of
// rules, which the provider's recurrence block cannot say, are in
// recur_properties and read back as they were.
func TestWriteLeavesRRuleAndRulesToRecurProperties(t *testing.T) {
	es := []migrate.Exported{
		exported(t, "rg/c", `{"location": "westeurope", "properties": {"sku": {"name": "Standard"}}}`),
		exported(t, "rg/c/j", jobAnswers["rrule"]),
		exported(t, "rg/c/k", jobAnswers["rules"]),
	}
	w := assertRoundTrip(t, es)
	require.NotRegexp(t, `recurrence \{[^}]*frequency`, w.src, "no frequency in a recurrence block")
	require.Regexp(t, `(?s)recur_properties = \{.*rrule *= "DTSTART;TZID=Europe/Berlin`, w.src)
	require.Regexp(t, `(?s)recur_properties = \{.*rules *= \[`, w.src)
}
