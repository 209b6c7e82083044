package migrate

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestExportLeavesCredentialsToParameters: the value of a credential
// header, well-known or named by the operator, and a URI whose query
// holds a credential are secrets of the export, in the action and in its
// error action; other headers and URIs are not.
func TestExportLeavesCredentialsToParameters(t *testing.T) {
	answer := `{"properties": {"action": {"type": "Http",
		"request": {"method": "POST", "uri": "https://fn.example/api/run?code=FUNCKEY&x=1",
			"headers": {"X-Api-Key": "k1", "Content-Type": "application/json", "x-tenant": "t", "X-Refresh-Token": "r", "authorization": "Bearer b"}},
		"errorAction": {"type": "Https", "request": {"method": "GET", "uri": "https://acct.blob.example/c?sv=2019&sig=SIG",
			"headers": {"X-Tenant": "t2"}}}}}}`
	r := Resource{Kind: Job, ResourceGroup: "rg", Collection: "c", Job: "j"}
	e, err := ForExport(r, json.RawMessage(answer), ExportOptions{SecretHeaders: []string{"x-TENANT"}})
	require.NoError(t, err)
	var got []string
	for _, s := range e.Secrets {
		got = append(got, s.String())
	}
	require.ElementsMatch(t, []string{
		"properties.action.request.uri",
		"properties.action.request.headers.X-Api-Key",
		"properties.action.request.headers.X-Refresh-Token",
		"properties.action.request.headers.authorization",
		"properties.action.request.headers.x-tenant",
		"properties.action.errorAction.request.uri",
		"properties.action.errorAction.request.headers.X-Tenant",
	}, got)

	e, err = ForExport(r, json.RawMessage(answer), ExportOptions{})
	require.NoError(t, err)
	require.Len(t, e.Secrets, 5, "x-tenant is a secret only when named")

	plain := `{"properties": {"action": {"type": "Http", "request": {"method": "GET",
		"uri": "https://example.com/report?source=scheduler&level=error&keyboard=1", "headers": {"Content-Type": "text/plain", "Idempotency": "1"}}}}}`
	e, err = ForExport(r, json.RawMessage(plain), ExportOptions{})
	require.NoError(t, err)
	require.Empty(t, e.Secrets)
}

func TestCredentialQueryNamesTheParameter(t *testing.T) {
	for uri, want := range map[string]string{
		"https://a.example/?sig=x":                "sig",
		"https://a.example/?Code=x":               "Code",
		"https://a.example/p?a=1&access_token=x":  "access_token",
		"https://a.example/p?subscription-key=x":  "subscription-key",
		"https://a.example/p?my_api_key=x":        "my_api_key",
		"https://a.example/p?monkey=1&keyboard=2": "",
		"https://a.example/p":                     "",
		"https://a.example/p#sig=x":               "",
		"http://[::1]:%zz/":                       "",
	} {
		require.Equal(t, want, CredentialQuery(uri), uri)
	}
}

// TestExportSpellsStatesAsAzure: a collection's state (which recur's
// answers spell in lower case, as Azure's did) and a job's are spelled
// alike in one file; a completed job stays completed, which a PUT takes as
// it creates the job, and a faulted one is disabled, so that neither runs
// again because it moved.
func TestExportSpellsStatesAsAzure(t *testing.T) {
	state := func(kind Kind, answer string) any {
		t.Helper()
		e, err := ForExport(Resource{Kind: kind, ResourceGroup: "rg", Collection: "c", Job: "j"}, json.RawMessage(answer), ExportOptions{})
		require.NoError(t, err)
		return e.Definition["properties"].(map[string]any)["state"]
	}
	require.Equal(t, "Enabled", state(Collection, `{"properties": {"state": "enabled"}}`))
	require.Equal(t, "Suspended", state(Collection, `{"properties": {"state": "Suspended"}}`))
	for answer, want := range map[string]string{"Enabled": "Enabled", "disabled": "Disabled", "Completed": "Completed", "Faulted": "Disabled"} {
		require.Equal(t, want, state(Job, `{"properties": {"state": "`+answer+`", "status": {"executionCount": 1}}}`), answer)
	}
}

// TestExportLeavesSigningSecretsToParameters: an answer shows how many
// signing secrets a request has, not them; the export lists that many in
// their place, each a secret of the export, and no secretCount, which a
// PUT does not give.
func TestExportLeavesSigningSecretsToParameters(t *testing.T) {
	answer := `{"properties": {"action": {"type": "Https",
		"request": {"method": "POST", "uri": "https://example.com/hook", "signing": {"secretCount": 2}},
		"errorAction": {"type": "Http", "request": {"method": "POST", "uri": "http://example.com/e", "signing": {"secretCount": 1}}}}}}`
	r := Resource{Kind: Job, ResourceGroup: "rg", Collection: "c", Job: "j"}
	e, err := ForExport(r, json.RawMessage(answer), ExportOptions{})
	require.NoError(t, err)
	var got, names []string
	for _, s := range e.Secrets {
		got, names = append(got, s.String()), append(names, SecretName(r, s))
		s.Set(e.Definition, "whsec_"+s.String())
	}
	require.Equal(t, []string{
		"properties.action.request.signing.secrets.0",
		"properties.action.request.signing.secrets.1",
		"properties.action.errorAction.request.signing.secrets.0",
	}, got)
	require.Equal(t, []string{"c_j_signing_secrets_0", "c_j_signing_secrets_1", "c_j_errorAction_signing_secrets_0"}, names)
	data, err := json.Marshal(e.Definition)
	require.NoError(t, err)
	require.JSONEq(t, `{"properties": {"action": {"type": "Https",
		"request": {"method": "POST", "uri": "https://example.com/hook", "signing": {"secrets": [
			"whsec_properties.action.request.signing.secrets.0", "whsec_properties.action.request.signing.secrets.1"]}},
		"errorAction": {"type": "Http", "request": {"method": "POST", "uri": "http://example.com/e", "signing": {"secrets": [
			"whsec_properties.action.errorAction.request.signing.secrets.0"]}}}}}}`, string(data))
	require.NotContains(t, string(e.Body), "secretCount")

	for count, want := range map[string]int{"-1": 0, "1e9": 5} {
		e, err := ForExport(r, json.RawMessage(`{"properties": {"action": {"type": "Https",
			"request": {"method": "POST", "uri": "https://example.com/hook", "signing": {"secretCount": `+count+`}}}}}`), ExportOptions{})
		require.NoError(t, err)
		require.Len(t, e.Secrets, want, "a count of %s from the server", count)
	}
}
