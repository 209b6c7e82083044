package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// The jobs of TestExportTerraformRoundTrip, by name: the secrets are
// what its import gives their variables.
var terraformJobs = map[string]string{
	"basic": `{"properties": {"startTime": "2030-01-01T00:00:00Z", "state": "enabled",
		"action": {"type": "Https", "request": {"uri": "https://example.com/basic", "method": "POST", "body": "run ${job}",
			"headers": {"Content-Type": "text/plain"},
			"authentication": {"type": "Basic", "username": "ops", "password": "secret-basic-password"}},
			"retryPolicy": {"retryType": "Fixed", "retryInterval": "00:01:00", "retryCount": 2}},
		"recurrence": {"frequency": "Week", "interval": 1, "schedule": {"weekDays": ["Monday"], "hours": [6], "minutes": [0]}}}}`,
	"queue": `{"properties": {"startTime": "2030-01-01T00:00:00Z",
		"action": {"type": "StorageQueue", "queueMessage": {"storageAccount": "recurtest", "queueName": "work",
			"sasToken": "?sv=2022-11-02&sig=secret-queue-sas", "message": "go"}},
		"recurrence": {"frequency": "Month", "interval": 1, "schedule": {"monthlyOccurrences": [{"day": "Sunday", "occurrence": 1}]}}}}`,
	"extensions": `{"properties": {"startTime": "2030-01-01T08:00:00", "state": "Disabled", "stateReason": "paused by ops",
		"overlapPolicy": "BufferOne", "catchUpWindow": "PT2H", "jitter": "PT30S", "maxConcurrentRuns": 2, "maxConsecutiveFaults": 5,
		"action": {"type": "Https", "timeout": "PT2M",
			"request": {"uri": "https://example.com/x", "method": "POST", "successStatusCodes": [200, "3xx"], "successBodyPattern": "^ok"},
			"retryPolicy": {"retryType": "Exponential", "retryInterval": "PT30S", "retryCount": 5, "maximumInterval": "PT10M"},
			"errorAction": {"type": "Https", "request": {"uri": "https://example.com/failed", "method": "POST",
				"authentication": {"type": "ActiveDirectoryOAuth", "tenant": "contoso.onmicrosoft.com", "clientId": "app",
					"audience": "https://management.core.windows.net/", "secret": "secret-oauth-secret"}}}},
		"recurrence": {"frequency": "Day", "timeZone": "Europe/Berlin", "schedule": {"hours": [2], "minutes": [30]},
			"exclusions": [{"date": "2030-12-25"}]}}}`,
	"servicebus": `{"properties": {"startTime": "2030-01-01T00:00:00Z",
		"action": {"type": "ServiceBusQueue", "serviceBusQueueMessage": {"namespace": "recur-bus", "queueName": "orders", "message": "tick",
			"authentication": {"sasKeyName": "send", "sasKey": "secret-servicebus-key"},
			"brokeredMessageProperties": {"messageId": "m-1"}, "customMessageProperties": {"source": "recur"}}},
		"recurrence": {"frequency": "Hour", "interval": 2}}}`,
}

// terraformSecrets are the values of the exported file's variables: the
// jobs' secrets.
var terraformSecrets = map[string]string{
	"reports_basic_password":                           "secret-basic-password",
	"reports_queue_queueMessage_sasToken":              "?sv=2022-11-02&sig=secret-queue-sas",
	"reports_extensions_errorAction_secret":            "secret-oauth-secret",
	"reports_servicebus_serviceBusQueueMessage_sasKey": "secret-servicebus-key",
}

// TestExportTerraformRoundTrip exports a collection and its jobs as
// Terraform: the file holds no secret and, imported into the recur it
// came from with the secrets supplied, changes nothing; imported after the
// collection is deleted, it gives back every definition.
func TestExportTerraformRoundTrip(t *testing.T) {
	st := startRecur(t)
	sub := []string{"--server", st.API.URL, "--subscription", "tf"}
	at := append(slices.Clone(sub), "--resource-group", "ops")

	res := recurCLI(t, `{"location": "westeurope", "tags": {"team": "ops", "cost-center": "42"},
		"properties": {"sku": {"name": "Standard"}, "quota": {"maxJobCount": 20}}}`, append([]string{"collections", "put", "reports", "-f", "-"}, at...)...)
	require.Equal(t, 0, res.code, "%s", res)
	for name, def := range terraformJobs {
		res := recurCLI(t, def, append([]string{"jobs", "put", name, "--collection", "reports", "-f", "-"}, at...)...)
		require.Equal(t, 0, res.code, "%s: %s", name, res)
	}
	before := definitions(t, at, "reports", len(terraformJobs))

	file := filepath.Join(t.TempDir(), "main.tf")
	res = recurCLI(t, "", append([]string{"export", "--format", "terraform", "-o", file}, sub...)...)
	require.Equal(t, 0, res.code, "%s", res)
	require.Contains(t, res.stderr, "exported 1 collections and 4 jobs; 4 secrets are variables without a value")
	src, err := os.ReadFile(file)
	require.NoError(t, err)
	for _, secret := range terraformSecrets {
		require.NotContains(t, string(src), secret, "an export holds no secret")
	}
	require.NotContains(t, string(src), "secret-")

	importArgs := append([]string{"import", file}, sub...)
	for name, value := range terraformSecrets {
		importArgs = append(importArgs, "-var", name+"="+value)
	}
	// Recur-Apply compares the secrets too: the dry run says the file is
	// what recur holds, secrets and all.
	res = recurCLI(t, "", append(slices.Clone(importArgs), "--dry-run")...)
	require.Equal(t, 0, res.code, "%s", res)
	require.Equal(t, "dry run, nothing written: 0 create, 0 update, 5 unchanged, 0 skip, 0 fail", summaryLine(res), "%s\n%s", res, src)
	res = recurCLI(t, "", append(slices.Clone(importArgs), "-var", "reports_basic_password=another", "--dry-run")...)
	require.Equal(t, "update", byName(t, res)["reports/basic"]["RESULT"], "another password: %s", res)

	res = recurCLI(t, "", append([]string{"collections", "delete", "reports"}, at...)...)
	require.Equal(t, 0, res.code, "%s", res)
	for name := range terraformJobs {
		eventually(t, func(r cliResult) bool { return r.code == 1 }, "", append([]string{"jobs", "get", name, "--collection", "reports"}, at...)...)
	}

	res = recurCLI(t, "", importArgs...)
	require.Equal(t, 0, res.code, "%s", res)
	require.Equal(t, "5 created, 0 updated, 0 unchanged, 0 skipped, 0 failed", summaryLine(res), "%s", res)
	require.Equal(t, before, definitions(t, at, "reports", len(terraformJobs)), "export, delete and import give back every definition")

	res = recurCLI(t, "", importArgs...)
	require.Equal(t, 0, res.code, "%s", res)
	require.Equal(t, "0 created, 0 updated, 5 unchanged, 0 skipped, 0 failed", summaryLine(res), "%s", res)
}
