package arm

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/migrate"
)

// The templates of these tests are written here, after the patterns of
// the templates Azure Scheduler's users kept: Azure's own web app
// quickstart (a web app, a collection with its jobs nested, each with
// dependsOn, a URI from reference(), a retry policy inside the request,
// which Azure ignored), an object parameter as the collection's sku, a
// location defaulting to [resourceGroup().location], jobs at the top level
// named collection/job, literally and with concat(), and a key from
// listKeys().
var patternTemplates = []string{"testdata/webapp.json", "testdata/patterns.json"}

// resourceView is a Resource as the golden file writes it, every field.
type resourceView struct {
	Kind          string            `json:"kind"`
	ResourceGroup string            `json:"resourceGroup,omitempty"`
	Collection    string            `json:"collection"`
	Job           string            `json:"job,omitempty"`
	Source        migrate.Source    `json:"source"`
	Body          json.RawMessage   `json:"body"`
	Missing       []migrate.Missing `json:"missing,omitempty"`
	Warnings      []migrate.Warning `json:"warnings,omitempty"`
}

func views(rs []migrate.Resource) []resourceView {
	out := make([]resourceView, 0, len(rs))
	for _, r := range rs {
		out = append(out, resourceView{Kind: r.Kind.String(), ResourceGroup: r.ResourceGroup, Collection: r.Collection, Job: r.Job,
			Source: r.Source, Body: r.Body, Missing: r.Missing, Warnings: r.Warnings})
	}
	return out
}

// TestReadThePatternsOfRealTemplates reads the templates with the values
// they leave to their user, one by its place in the file and the others
// by their text, and compares every field of every resource with the
// golden file. Every body decodes into recur's types with no member left
// over: what Azure ignored is left out, with a warning.
func TestReadThePatternsOfRealTemplates(t *testing.T) {
	rs, err := Read(patternTemplates, Options{ResourceGroup: "web-rg", Subscription: "sub-1", Location: "westeurope", Set: map[string]string{
		"siteName": "contoso-web",
		"testdata/webapp.json:resources[2].resources[0].properties.action.request.uri":    "http://contoso-web.azurewebsites.net",
		"[concat('http://', reference(variables('siteId')).hostNames[0], '/api/report')]": "http://contoso-web.azurewebsites.net/api/report",
		"[listKeys(variables('ruleId'), '2017-04-01').primaryKey]":                        "c2VydmljZWJ1c2tleQ==",
	}})
	require.NoError(t, err)
	got, err := json.MarshalIndent(views(rs), "", "  ")
	require.NoError(t, err)
	want, err := os.ReadFile("testdata/patterns.golden.json")
	require.NoError(t, err)
	require.JSONEq(t, string(want), string(got))
	for _, r := range rs {
		assert.Empty(t, r.Missing, r.Name())
		decodes(t, r)
	}
}

// TestReadThePatternsInOneRound: without any value, one reading names
// every value the templates leave to their user: the parameter, the
// reference() and listKeys() values, the location and the resource group,
// each with the --set that gives it.
func TestReadThePatternsInOneRound(t *testing.T) {
	rs, err := Read(patternTemplates[:1], Options{})
	require.NoError(t, err)
	lines := map[string][]string{}
	for _, r := range rs {
		for _, m := range r.Missing {
			lines[r.Name()] = append(lines[r.Name()], m.String())
		}
	}
	const none = "the parameter has no value: no --set, parameters file or defaultValue gives one"
	group := func(path string) string {
		return path + " needs --resource-group: an ARM template deploys into the resource group it is given (give --resource-group)"
	}
	const coll = "[parameters('collectionName')]"
	assert.Equal(t, map[string][]string{
		coll: {
			"resources[2].name needs siteName: " + none + " (supply it with --set 'siteName=VALUE')",
			"resources[2].location needs [resourceGroup().location]: resourceGroup().location is not given to recur import: give --location" +
				" (supply it with --set 'resources[2].location=VALUE')",
			group("resources[2]"),
		},
		coll + "/[concat(parameters('collectionName'), '/', 'keep-warm')]": {
			"resources[2].name needs siteName: " + none + " (supply it with --set 'siteName=VALUE')",
			"resources[2].resources[0].name needs siteName: " + none + " (supply it with --set 'siteName=VALUE')",
			"resources[2].resources[0].properties.action.request.uri needs [concat('http://', reference(variables('siteId')).hostNames[0])]: " +
				"the template function reference is not evaluated by recur import" +
				" (supply it with --set 'resources[2].resources[0].properties.action.request.uri=VALUE')",
			group("resources[2].resources[0]"),
		},
		coll + "/nightly-report": {
			"resources[2].name needs siteName: " + none + " (supply it with --set 'siteName=VALUE')",
			"resources[2].resources[1].properties.action.request.uri needs [concat('http://', reference(variables('siteId')).hostNames[0], '/api/report')]: " +
				"the template function reference is not evaluated by recur import" +
				" (supply it with --set 'resources[2].resources[1].properties.action.request.uri=VALUE')",
			"resources[2].resources[1].properties.action.request.body needs siteName: " + none + " (supply it with --set 'siteName=VALUE')",
			group("resources[2].resources[1]"),
		},
	}, lines)
}
