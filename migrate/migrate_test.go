package migrate

import (
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
