package arm

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/migrate"
)

// byName reads templates and returns their resources by name, failing
// on a name read twice.
func byName(t *testing.T, paths []string, opts Options) map[string]migrate.Resource {
	t.Helper()
	rs, err := Read(paths, opts)
	require.NoError(t, err)
	m := map[string]migrate.Resource{}
	for _, r := range rs {
		_, dup := m[r.Name()]
		require.False(t, dup, "%s read twice", r.Name())
		m[r.Name()] = r
	}
	return m
}

// decodes checks that r's body is what recur's API takes: it decodes
// into recur's own types with no member left over.
func decodes(t *testing.T, r migrate.Resource) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.DisallowUnknownFields()
	var err error
	if r.Kind == migrate.Collection {
		err = dec.Decode(&jobs.Collection{})
	} else {
		err = dec.Decode(&jobs.Job{})
	}
	require.NoError(t, err, "%s: %s", r.Name(), r.Body)
}

const (
	billingExport = `{"properties": {
		"startTime": "2017-01-01T00:00:00Z",
		"state": "Enabled",
		"action": {
			"type": "Https",
			"request": {
				"uri": "https://api.prod.contoso.com/billing/export",
				"method": "POST",
				"headers": {"Content-Type": "application/json"},
				"body": "{\"period\": \"last-month\"}",
				"authentication": {"type": "Basic", "username": "scheduler", "password": "p@ss<word>&1"}
			},
			"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT30S", "retryCount": 2},
			"errorAction": {
				"type": "Https",
				"request": {
					"uri": "https://api.prod.contoso.com/alerts?source=scheduler&level=error",
					"method": "POST",
					"headers": {"Content-Type": "application/json", "x-ms-client": "scheduler"},
					"body": "{\"text\": \"a scheduler job failed\"}"
				}
			}
		},
		"recurrence": {
			"frequency": "Month",
			"interval": 1,
			"schedule": {
				"monthlyOccurrences": [{"day": "Monday", "occurrence": 1}, {"day": "Friday", "occurrence": -1}],
				"hours": [6],
				"minutes": [30]
			}
		}
	}}`
	queuePing = `{"properties": {
		"state": "Enabled",
		"action": {
			"type": "StorageQueue",
			"queueMessage": {
				"storageAccount": "contosoprodstore",
				"queueName": "prod-nightly-events",
				"sasToken": "?sv=2019-02-02&sig=c2lnbmF0dXJl",
				"message": "[ping from the scheduler]"
			},
			"retryPolicy": {"retryType": "None"}
		},
		"recurrence": {"frequency": "Hour", "interval": 1, "count": 100}
	}}`
	serviceBusReport = `{"properties": {
		"state": "Disabled",
		"action": {
			"type": "ServiceBusQueue",
			"serviceBusQueueMessage": {
				"namespace": "contoso-bus",
				"queueName": "reports",
				"transportType": "AMQP",
				"authentication": {"type": "SharedAccessKey", "sasKeyName": "RootManageSharedAccessKey", "sasKey": "c2VydmljZWJ1c2tleQ=="},
				"message": "report for prod ({daily})",
				"brokeredMessageProperties": {"contentType": "text/plain", "messageId": "daily-report", "forcePersistence": false},
				"customMessageProperties": {"source": "scheduler"}
			},
			"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT1M", "retryCount": 2},
			"errorAction": {
				"type": "Https",
				"request": {
					"uri": "https://api.prod.contoso.com/alerts?source=scheduler&level=error",
					"method": "POST",
					"headers": {"Content-Type": "application/json", "x-ms-client": "scheduler"},
					"body": "{\"text\": \"a scheduler job failed\"}"
				}
			}
		},
		"recurrence": {
			"frequency": "Week",
			"interval": 1,
			"endTime": "2030-12-31T00:00:00Z",
			"schedule": {"weekDays": ["Monday", "Wednesday", "Friday"], "hours": [7], "minutes": [0, 30]}
		}
	}}`
)

func TestReadCollectionWithNestedJobs(t *testing.T) {
	rs := byName(t, []string{"testdata/collection.json"}, Options{
		ParameterFiles: []string{"testdata/collection.parameters.json", "testdata/override.parameters.json"},
		Set:            map[string]string{"queueSasToken": "?sv=2019-02-02&sig=c2lnbmF0dXJl"},
		Location:       "westeurope",
		ResourceGroup:  "rg",
	})
	want := map[string]struct {
		body string
		src  migrate.Source
	}{
		"contoso-ops-eu": {`{
			"location": "westeurope",
			"tags": {"env": "prod", "owner": "ops"},
			"properties": {
				"sku": {"name": "Standard"},
				"state": "Enabled",
				"quota": {"maxJobCount": 50, "maxJobOccurrence": 1000, "maxRecurrence": {"frequency": "Minute", "interval": 1}}
			}
		}`, migrate.Source{File: "testdata/collection.json", Path: "resources[0]", Line: 47}},
		"contoso-ops-eu/billing-export":    {billingExport, migrate.Source{File: "testdata/collection.json", Path: "resources[0].resources[0]", Line: 64}},
		"contoso-ops-eu/queue-ping":        {queuePing, migrate.Source{File: "testdata/collection.json", Path: "resources[0].resources[1]", Line: 102}},
		"contoso-ops-eu/servicebus-report": {serviceBusReport, migrate.Source{File: "testdata/collection.json", Path: "resources[0].resources[2]", Line: 121}},
	}
	require.Len(t, rs, len(want))
	for name, w := range want {
		r, ok := rs[name]
		require.True(t, ok, "%s is not read", name)
		assert.JSONEq(t, w.body, string(r.Body), name)
		assert.Equal(t, w.src, r.Source, name)
		assert.Empty(t, r.Missing, name)
		assert.Empty(t, r.ResourceGroup, name)
		decodes(t, r)
	}
	assert.Equal(t, migrate.Collection, rs["contoso-ops-eu"].Kind)
	assert.Equal(t, migrate.Job, rs["contoso-ops-eu/queue-ping"].Kind)
	// The body is the secret as given, not as HTML-escaped JSON.
	assert.Contains(t, string(rs["contoso-ops-eu/billing-export"].Body), `"p@ss<word>&1"`)
}

func TestReadKeyVaultReferenceIsMissing(t *testing.T) {
	rs := byName(t, []string{"testdata/collection.json"}, Options{
		ParameterFiles: []string{"testdata/collection.parameters.json"},
		Location:       "westeurope",
		ResourceGroup:  "rg",
	})
	require.Len(t, rs, 4)
	ping := rs["contoso-ops/queue-ping"]
	require.Len(t, ping.Missing, 1)
	m := ping.Missing[0]
	assert.Equal(t, "queueSasToken", m.Name)
	assert.Equal(t, "resources[0].resources[1].properties.action.queueMessage.sasToken", m.Key, "the place supplies it too")
	assert.Equal(t, "resources[0].resources[1].properties.action.queueMessage.sasToken", m.Path)
	assert.Equal(t, `testdata/collection.parameters.json takes it from Key Vault (secret "queue-sas" of vault "ops-vault"), which recur import does not read`, m.Reason)
	// What is known is still there; the unknown value stays as written.
	var body struct {
		Properties struct {
			Action struct {
				QueueMessage map[string]string `json:"queueMessage"`
			} `json:"action"`
		} `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(ping.Body, &body))
	assert.Equal(t, map[string]string{"storageAccount": "contosoprodstore", "queueName": "prod-nightly-events",
		"sasToken": "[parameters('queueSasToken')]", "message": "[ping from the scheduler]"}, body.Properties.Action.QueueMessage)
	for _, name := range []string{"contoso-ops", "contoso-ops/billing-export", "contoso-ops/servicebus-report"} {
		assert.Empty(t, rs[name].Missing, name)
	}
	// Without the override file, retryCount is the default.
	assert.Contains(t, string(rs["contoso-ops/billing-export"].Body), `"retryCount":4`)
}

// TestReadWithoutParametersOrLocation: what a template leaves to its user
// comes in one round, the resource group beside the parameters.
func TestReadWithoutParametersOrLocation(t *testing.T) {
	rs := byName(t, []string{"testdata/collection.json"}, Options{})
	require.Len(t, rs, 4)
	group := func(path string) migrate.Missing {
		return migrate.Missing{Flag: "--resource-group", Path: path, Reason: "an ARM template deploys into the resource group it is given"}
	}
	assert.Equal(t, []migrate.Missing{{Name: "[resourceGroup().location]", Key: "resources[0].location", Path: "resources[0].location",
		Reason: "resourceGroup().location is not given to recur import: give --location"}, group("resources[0]")}, rs["ops-jobs"].Missing)
	const password = "resources[0].resources[0].properties.action.request.authentication.password"
	assert.Equal(t, []migrate.Missing{{Name: "apiPassword", Key: password, Path: password,
		Reason: "the parameter has no value: no --set, parameters file or defaultValue gives one"}, group("resources[0].resources[0]")}, rs["ops-jobs/billing-export"].Missing)
	assert.Equal(t, "queueSasToken", rs["ops-jobs/queue-ping"].Missing[0].Name)
	assert.Equal(t, group("resources[0].resources[1]"), rs["ops-jobs/queue-ping"].Missing[1])
	assert.Equal(t, "serviceBusKey", rs["ops-jobs/servicebus-report"].Missing[0].Name)
	assert.Contains(t, string(rs["ops-jobs/queue-ping"].Body), `"queueName":"dev-nightly-events"`)
}

func TestReadTopLevelJobs(t *testing.T) {
	opts := Options{Set: map[string]string{"collectionName": "nightly-jobs"}, Subscription: "sub-1", ResourceGroup: "rg-1", Location: "eastus"}
	rs := byName(t, []string{"testdata/toplevel.json"}, opts)
	require.Len(t, rs, 3, "the weekly job's condition is false")
	coll := rs["nightly-jobs"]
	assert.JSONEq(t, `{"location": "eastus", "properties": {"sku": {"name": "Free"}, "state": "Enabled"}}`, string(coll.Body))
	nightly := rs["nightly-jobs/nightly"]
	assert.Equal(t, "nightly-jobs", nightly.Collection)
	assert.Equal(t, "nightly", nightly.Job)
	assert.Equal(t, migrate.Source{File: "testdata/toplevel.json", Path: "resources[1]", Line: 26}, nightly.Source)
	assert.JSONEq(t, `{"properties": {
		"action": {"type": "Http", "request": {
			"uri": "https://hooks.contoso.com/nightly",
			"method": "GET",
			"headers": {"x-origin": "/subscriptions/sub-1/resourceGroups/rg-1"}
		}},
		"recurrence": {"frequency": "Day", "interval": 1, "schedule": {"hours": [2], "minutes": [15]}}
	}}`, string(nightly.Body))
	assert.Empty(t, nightly.Missing)

	prod := rs["nightly-jobs/prod-only"]
	assert.Equal(t, []migrate.Missing{{Name: "[equals(parameters('environment'), 'prod')]", Key: "resources[3].condition", Path: "resources[3].condition",
		Reason: "the template function equals is not evaluated by recur import"}}, prod.Missing)
	assert.Equal(t, 53, prod.Source.Line)
	assert.JSONEq(t, `{"properties": {
		"action": {"type": "Http", "request": {"uri": "https://hooks.contoso.com/prod", "method": "POST"}},
		"recurrence": {"frequency": "Hour", "interval": 12}
	}}`, string(prod.Body))
	for _, r := range rs {
		decodes(t, r)
	}

	// The user answers the condition recur import does not evaluate, and
	// sets the one it does.
	opts.Set = map[string]string{"collectionName": "nightly-jobs", "deployWeekly": "True", "[equals(parameters('environment'), 'prod')]": "false"}
	rs = byName(t, []string{"testdata/toplevel.json"}, opts)
	require.Len(t, rs, 3)
	require.Contains(t, rs, "nightly-jobs/weekly")
	assert.Empty(t, rs["nightly-jobs/weekly"].Missing)
	assert.NotContains(t, rs, "nightly-jobs/prod-only")
}

func TestReadUnnamedCollection(t *testing.T) {
	rs, err := Read([]string{"testdata/toplevel.json"}, Options{Location: "eastus", ResourceGroup: "rg"})
	require.NoError(t, err)
	require.Len(t, rs, 3)
	unset := migrate.Missing{Name: "collectionName", Key: "resources[0].name", Path: "resources[0].name", Reason: "the parameter has no value: no --set, parameters file or defaultValue gives one"}
	assert.Equal(t, migrate.Resource{Kind: migrate.Collection, Body: json.RawMessage(`{"location":"eastus","properties":{"sku":{"name":"Free"},"state":"Enabled"}}`),
		Source: migrate.Source{File: "testdata/toplevel.json", Path: "resources[0]", Line: 19}, Label: "[parameters('collectionName')]",
		Missing: []migrate.Missing{unset}}, rs[0])
	unset.Path, unset.Key = "resources[1].name", "resources[1].name"
	assert.Equal(t, "", rs[1].Collection+rs[1].Job)
	assert.Contains(t, rs[1].Missing, unset)
	assert.Len(t, rs[1].Missing, 2, "a header needs subscription().subscriptionId, not given")
}

func TestReadMissing(t *testing.T) {
	rs, err := Read([]string{"testdata/missing.json"}, Options{ResourceGroup: "rg"})
	require.NoError(t, err)
	const listKeys = "[listKeys(variables('storageId'), '2019-06-01').keys[0].value]"
	const archiveSas = `[listAccountSas(variables('storageId'), '2019-06-01', json('{"signedServices": "q"}')).accountSasToken]`
	const unique = "[concat(parameters('collectionName'), '/', uniqueString(resourceGroup().id))]"
	type want struct {
		kind      migrate.Kind
		coll, job string
		path      string
		line      int
		missing   []migrate.Missing
	}
	const drainSas, webhookPassword = "resources[0].resources[0].properties.action.queueMessage.sasToken",
		"resources[0].resources[1].properties.action.request.authentication.password"
	const archiveAt = "resources[0].resources[2].properties.action.queueMessage.sasToken"
	wants := []want{
		{migrate.Collection, "reports", "", "resources[0]", 14, nil},
		{migrate.Job, "reports", "drain", "resources[0].resources[0]", 21, []migrate.Missing{{
			Name: listKeys, Key: drainSas, Path: drainSas,
			Reason: "the template function listKeys is not evaluated by recur import"}}},
		{migrate.Job, "reports", "webhook", "resources[0].resources[1]", 38, []migrate.Missing{{
			Name: "webhookPassword", Key: webhookPassword, Path: webhookPassword,
			Reason: "the parameter has no value: no --set, parameters file or defaultValue gives one"}}},
		{migrate.Job, "reports", "archive", "resources[0].resources[2]", 54, []migrate.Missing{{
			Name: archiveSas, Key: archiveAt, Path: archiveAt,
			Reason: "the template function listAccountSas is not evaluated by recur import"}}},
		{migrate.Job, "reports", "complete", "resources[0].resources[3]", 71, nil},
		{migrate.Job, "", "", "resources[1]", 82, []migrate.Missing{{
			Name: unique, Key: "resources[1].name", Path: "resources[1].name",
			Reason: "the template function uniqueString is not evaluated by recur import"}}},
		{migrate.Job, "", "", "resources[2]", 90, []migrate.Missing{{
			Path: "resources[2].copy", Reason: "the resource is in a copy loop, which recur import does not evaluate"}}},
		{migrate.Job, "reports", "inner", "resources[3].properties.template.resources[0]", 109, []migrate.Missing{{
			Path: "resources[3]", Reason: "the resource is in a nested deployment (Microsoft.Resources/deployments), which recur import does not evaluate"}}},
	}
	require.Len(t, rs, len(wants))
	for i, w := range wants {
		r := rs[i]
		assert.Equal(t, w, want{r.Kind, r.Collection, r.Job, r.Source.Path, r.Source.Line, r.Missing}, "resource %d", i)
	}
	assert.Contains(t, string(rs[1].Body), listKeys, "the unknown value stays as written")
	assert.Nil(t, rs[6].Body, "a resource in a copy loop is not evaluated")
	assert.JSONEq(t, `{"location": "northeurope", "properties": {"sku": {"name": "Standard"}}}`, string(rs[0].Body))
	assert.JSONEq(t, `{"properties": {"action": {"type": "Http", "request": {"uri": "https://hooks.contoso.com/complete", "method": "GET"}},
		"recurrence": {"frequency": "Hour", "interval": 1}}}`, string(rs[4].Body))

	// --set supplies each by its Name, or by its place (its Key).
	for _, set := range []map[string]string{
		{listKeys: "key-1", archiveSas: "?sv=archive", "webhookPassword": "hunter2", unique: "reports/abc123"},
		{drainSas: "key-1", archiveAt: "?sv=archive", webhookPassword: "hunter2", "resources[1].name": "reports/abc123"},
	} {
		rs, err = Read([]string{"testdata/missing.json"}, Options{Set: set, ResourceGroup: "rg"})
		require.NoError(t, err)
		for _, r := range rs[:6] {
			assert.Empty(t, r.Missing, r.Name())
			decodes(t, r)
		}
		assert.Equal(t, "reports/abc123", rs[5].Name())
		assert.Contains(t, string(rs[1].Body), `"sasToken":"key-1"`)
		assert.Contains(t, string(rs[2].Body), `"password":"hunter2"`)
		assert.Contains(t, string(rs[3].Body), `"sasToken":"?sv=archive"`)
	}
}

// TestSetByPlaceInSeveralTemplates: two templates have the same paths, so
// the place of a value names its file too.
func TestSetByPlaceInSeveralTemplates(t *testing.T) {
	const sas = "resources[0].resources[0].properties.action.queueMessage.sasToken"
	other := write(t, "other.json", `{"resources": [{"type": "Microsoft.Scheduler/jobCollections", "name": "other", "location": "westus",
		"resources": [{"type": "jobs", "name": "drain", "properties": {"action": {"type": "StorageQueue",
			"queueMessage": {"storageAccount": "a", "queueName": "q", "message": "m", "sasToken": "[listKeys('id', '2019-06-01').keys[0].value]"}}}}]}]}`)
	paths := []string{"testdata/missing.json", other}
	rs, err := Read(paths, Options{ResourceGroup: "rg"})
	require.NoError(t, err)
	byName := map[string]migrate.Resource{}
	for _, r := range rs {
		byName[r.Name()] = r
	}
	assert.Equal(t, "testdata/missing.json:"+sas, byName["reports/drain"].Missing[0].Key)
	assert.Equal(t, other+":"+sas, byName["other/drain"].Missing[0].Key)

	rs, err = Read(paths, Options{ResourceGroup: "rg", Set: map[string]string{other + ":" + sas: "key-2", sas: "key-1"}})
	require.NoError(t, err)
	for _, r := range rs {
		switch r.Name() {
		case "other/drain":
			assert.Empty(t, r.Missing)
			assert.Contains(t, string(r.Body), `"sasToken":"key-2"`)
		case "reports/drain":
			assert.Len(t, r.Missing, 1, "a path alone names no place among several templates")
		}
	}
}

// write writes a template into a test's directory.
func write(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

const typedTemplate = `{
  "parameters": {
    "count": {"type": "int"},
    "persist": {"type": "bool"},
    "hours": {"type": "array"},
    "auth": {"type": "secureobject"},
    "sku": {"type": "string", "allowedValues": ["Free", "Standard", "P10Premium"], "defaultValue": "Standard"}
  },
  "resources": [{
    "type": "Microsoft.Scheduler/jobCollections/jobs",
    "name": "c/j",
    "properties": {
      "recurrence": {"frequency": "Hour", "count": "[parameters('count')]", "schedule": {"hours": "[parameters('hours')]"}},
      "action": {
        "type": "Https",
        "request": {"uri": "https://example.com/", "method": "GET", "authentication": "[parameters('auth')]"},
        "serviceBusQueueMessage": {"brokeredMessageProperties": {"forcePersistence": "[parameters('persist')]"}}
      }
    }
  }, {
    "type": "Microsoft.Scheduler/jobCollections",
    "name": "c",
    "location": "westus",
    "properties": {"sku": {"name": "[parameters('sku')]"}}
  }]
}`

func TestSetConvertsToTheParameterType(t *testing.T) {
	path := write(t, "typed.json", typedTemplate)
	rs, err := Read([]string{path}, Options{Set: map[string]string{
		"count": "-3", "persist": "FALSE", "hours": "[1, 2]", "auth": `{"type": "Basic", "username": "u", "password": "secret"}`, "SKU": "p10premium",
	}, ResourceGroup: "rg"})
	require.NoError(t, err)
	require.Len(t, rs, 2)
	assert.Empty(t, rs[0].Missing)
	assert.JSONEq(t, `{"properties": {
		"recurrence": {"frequency": "Hour", "count": -3, "schedule": {"hours": [1, 2]}},
		"action": {
			"type": "Https",
			"request": {"uri": "https://example.com/", "method": "GET", "authentication": {"type": "Basic", "username": "u", "password": "secret"}},
			"serviceBusQueueMessage": {"brokeredMessageProperties": {"forcePersistence": false}}
		}
	}}`, string(rs[0].Body))
	assert.Empty(t, rs[1].Missing, "allowedValues are compared in any letter case")
	assert.JSONEq(t, `{"location": "westus", "properties": {"sku": {"name": "p10premium"}}}`, string(rs[1].Body))
}

func TestSetThatDoesNotConvert(t *testing.T) {
	path := write(t, "typed.json", typedTemplate)
	rs, err := Read([]string{path}, Options{Set: map[string]string{
		"count": "3.5", "persist": "yes", "hours": `{"a": 1}`, "auth": "not json", "sku": "Premium",
	}, ResourceGroup: "rg"})
	require.NoError(t, err)
	require.Len(t, rs, 2)
	reasons := map[string]string{}
	for _, m := range append(rs[0].Missing, rs[1].Missing...) {
		reasons[m.Name] = m.Reason
	}
	assert.Equal(t, map[string]string{
		"count":   "--set count: the value is not an int, the parameter's type",
		"persist": "--set persist: the value is not true or false, the parameter's type being bool",
		"hours":   "--set hours: the value is an object, not array, the parameter's type",
		"auth":    "--set auth: the value is not JSON (secureobject the parameter's type): line 1: invalid character 'o' in literal null (expecting 'u')",
		"sku":     `its --set value "Premium" is not one of the parameter's allowedValues`,
	}, reasons)
	assert.NotContains(t, reasons["auth"], "not json", "a secure value is never quoted")
}

func TestParameterFileValueOfTheWrongType(t *testing.T) {
	tmpl := write(t, "typed.json", typedTemplate)
	params := write(t, "typed.parameters.json", `{"parameters": {"count": {"value": "3"}, "persist": {"value": true},
		"hours": {"value": [3]}, "auth": {"value": {"type": "Basic"}}}}`)
	rs, err := Read([]string{tmpl}, Options{ParameterFiles: []string{params}, ResourceGroup: "rg"})
	require.NoError(t, err)
	assert.Equal(t, []migrate.Missing{{Name: "count", Key: "resources[0].properties.recurrence.count", Path: "resources[0].properties.recurrence.count",
		Reason: "parameter count is declared int, but its value in " + params + " is a string"}}, rs[0].Missing)
}

func TestReadErrors(t *testing.T) {
	for _, c := range []struct {
		name, content, want string
	}{
		{"notjson.json", "{\n  \"resources\": [\n    oops\n  ]\n}", "notjson.json: line 3: invalid character 'o'"},
		{"noresources.json", `{"parameters": {}}`, "noresources.json: not an ARM template: it has no resources"},
		{"array.json", `[]`, "array.json: not an ARM template: the file is not a JSON object"},
		{"scalar.json", `{"resources": 3}`, "scalar.json: not an ARM template: its resources are not an array or an object"},
		{"comment.json", "{\"resources\": []\n/* never closed", "comment.json: line 2: a /* comment is not closed"},
		{"trailing.json", "{\"resources\": []}\n{}", "trailing.json: line 2: invalid character '{' after top-level value"},
		{"truncated.json", "{\"resources\": [\n", "truncated.json: line 1: unexpected end of JSON input"},
	} {
		_, err := Read([]string{write(t, c.name, c.content)}, Options{})
		require.Error(t, err, c.name)
		assert.Contains(t, err.Error(), c.want, c.name)
	}
	_, err := Read([]string{"testdata/absent.json"}, Options{})
	assert.ErrorIs(t, err, os.ErrNotExist)

	for _, c := range []struct {
		name, content, want string
	}{
		{"template.json", `{"parameters": {"a": {"type": "string"}}, "resources": []}`, "it is a template, not a parameters file"},
		{"declared.json", `{"parameters": {"a": {"type": "string"}}}`, "not a parameters file: parameter a has no value or reference"},
		{"empty.json", `{}`, "not a parameters file: it has no parameters object"},
	} {
		_, err := Read([]string{"testdata/collection.json"}, Options{ParameterFiles: []string{write(t, c.name, c.content)}})
		require.Error(t, err, c.name)
		assert.Contains(t, err.Error(), c.want, c.name)
	}
}

func TestReadLanguageVersion2(t *testing.T) {
	path := write(t, "symbolic.json", `{
  "languageVersion": "2.0",
  "resources": {
    "existing-coll": {"type": "Microsoft.Scheduler/jobCollections", "existing": true, "name": "old"},
    "never": {"condition": false, "type": "Microsoft.Scheduler/jobCollections", "name": "never", "location": "westus"},
    "ping-job": {
      "type": "Microsoft.Scheduler/jobCollections/jobs",
      "name": "old/ping",
      "properties": {"action": {"type": "Http", "request": {"uri": "https://example.com/", "method": "GET"}}}
    }
  }
}`)
	rs, err := Read([]string{path}, Options{})
	require.NoError(t, err)
	require.Len(t, rs, 1, "an existing resource is referred to, and one whose condition is false is not deployed")
	assert.Equal(t, "old/ping", rs[0].Name())
	assert.Equal(t, migrate.Source{File: path, Path: "resources['ping-job']", Line: 6}, rs[0].Source)
}
