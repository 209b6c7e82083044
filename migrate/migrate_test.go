package migrate

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMissingSaysHowToSupplyIt(t *testing.T) {
	require.Equal(t, `properties.password needs apiPassword: no value (supply it with --set 'apiPassword=VALUE')`,
		Missing{Name: "apiPassword", Path: "properties.password", Reason: "no value"}.String())
	require.Equal(t, `sasToken needs [listKeys('sa').keys[0].value]: not evaluated (supply it with --set '[listKeys('\''sa'\'').keys[0].value]=VALUE')`,
		Missing{Name: "[listKeys('sa').keys[0].value]", Path: "sasToken", Reason: "not evaluated"}.String())
	require.Equal(t, "resources[2].copy: a copy loop is not evaluated",
		Missing{Path: "resources[2].copy", Reason: "a copy loop is not evaluated"}.String())
}

// TestMissingIsShortInReports says what a deeply nested expression lacks
// in a line: its text is quoted shortened, and no --set is offered for it.
func TestMissingIsShortInReports(t *testing.T) {
	deep := "[" + strings.Repeat("concat(", 100000) + "'a'" + strings.Repeat(")", 100000) + "]"
	s := Missing{Name: deep, Path: "properties.body", Reason: "the expression does not parse: it nests deeper than 100"}.String()
	require.Less(t, len(s), 1000)
	require.Contains(t, s, "properties.body needs [concat(concat(")
	require.Contains(t, s, "… (800005 bytes)")
	require.Contains(t, s, "too long to give with --set")
}

func TestNameOfWhatHasNoName(t *testing.T) {
	at := Source{File: "main.tf", Path: "azurerm_scheduler_job.web"}
	for _, c := range []struct {
		r    Resource
		want string
	}{
		{Resource{Kind: Collection, Collection: "ops", Source: at}, "ops"},
		{Resource{Kind: Job, Collection: "ops", Job: "nightly", Source: at}, "ops/nightly"},
		{Resource{Kind: Job, Collection: "ops", Source: at}, "azurerm_scheduler_job.web"},
		{Resource{Kind: Job, Job: "nightly", Source: at, Label: "[parameters('c')]/nightly"}, "[parameters('c')]/nightly"},
		{Resource{Kind: Collection, Source: at}, "azurerm_scheduler_job.web"},
	} {
		require.Equal(t, c.want, c.r.Name(), "%+v", c.r)
	}
}

// TestMissingOffersTheShorterName: a Key shorter than the expression is
// what the report offers for --set, even when the expression is too long
// to quote; a flag is named as the flag.
func TestMissingOffersTheShorterName(t *testing.T) {
	const uri = "[concat('http://', reference(resourceId('Microsoft.Web/sites', parameters('siteName'))).hostNames[0])]"
	const at = "resources[2].resources[0].properties.action.request.uri"
	require.Equal(t, at+" needs "+uri+": not evaluated (supply it with --set '"+at+"=VALUE')",
		Missing{Name: uri, Key: at, Path: at, Reason: "not evaluated"}.String())
	require.Equal(t, `properties.password needs apiPassword: no value (supply it with --set 'apiPassword=VALUE')`,
		Missing{Name: "apiPassword", Key: "resources[0].properties.password", Path: "properties.password", Reason: "no value"}.String(),
		"a parameter's name is shorter than its place")
	deep := "[" + strings.Repeat("concat(", 1000) + "'a'" + strings.Repeat(")", 1000) + "]"
	s := Missing{Name: deep, Key: "resources[0].name", Path: "resources[0].name", Reason: "too deep"}.String()
	require.Contains(t, s, "(supply it with --set 'resources[0].name=VALUE')")
	require.Less(t, len(s), 1000)
	require.Equal(t, "resources[0] needs --resource-group: not given (give --resource-group)",
		Missing{Flag: "--resource-group", Path: "resources[0]", Reason: "not given"}.String())
}

// TestPruneWarnsOfWhatItLeavesOut: the members recur's API does not have
// leave the bodies, each a warning naming it and what it probably meant;
// a body without any, or without a body, is as it was.
func TestPruneWarnsOfWhatItLeavesOut(t *testing.T) {
	rs := []Resource{
		{Kind: Job, Body: json.RawMessage(`{"properties":{"action":{"type":"Http","request":{"uri":"https://a.example/","retryPolicy":{"retryType":"None"}}},"zzz":1}}`)},
		{Kind: Collection, Body: json.RawMessage(`{"location":"westus","properties":{"sku":{"name":"Free"},"quota":{"maxJobCount":5,"maxRecurrence":{"frequency":"Hour","intervall":1}}}}`)},
		{Kind: Job, Body: json.RawMessage(`{"properties":{"state":"Enabled"}}`)},
		{Kind: Job},
	}
	Prune(rs, "Azure ignored this")
	require.JSONEq(t, `{"properties":{"action":{"type":"Http","request":{"uri":"https://a.example/"}}}}`, string(rs[0].Body))
	require.Equal(t, []Warning{
		{"properties.action.request.retryPolicy", "Azure ignored this; did you mean properties.action.retryPolicy?"},
		{"properties.zzz", "Azure ignored this member"},
	}, rs[0].Warnings)
	require.JSONEq(t, `{"location":"westus","properties":{"sku":{"name":"Free"},"quota":{"maxJobCount":5,"maxRecurrence":{"frequency":"Hour"}}}}`, string(rs[1].Body))
	require.Equal(t, []Warning{{"properties.quota.maxRecurrence.intervall", "Azure ignored this; did you mean properties.quota.maxRecurrence.interval?"}},
		rs[1].Warnings, "a collection's members are a collection's")
	require.Equal(t, `{"properties":{"state":"Enabled"}}`, string(rs[2].Body))
	require.Empty(t, rs[2].Warnings)
	require.Nil(t, rs[3].Body)
	require.Equal(t, "properties.zzz: Azure ignored this member", rs[0].Warnings[1].String())
}
