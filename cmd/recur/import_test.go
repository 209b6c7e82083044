package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/internal/recurtest"
	"github.com/recurhq/recur/migrate"
)

// withResources makes recur import read rs, whatever its files say: the
// tests of the import itself, apart from its readers.
func withResources(t *testing.T, rs func() []migrate.Resource) {
	read := readImportFiles
	readImportFiles = func(importOptions) ([]migrate.Resource, error) { return rs(), nil }
	t.Cleanup(func() { readImportFiles = read })
}

// byName indexes an import's table by NAME.
func byName(t *testing.T, res cliResult) map[string]map[string]string {
	t.Helper()
	table, _, _ := strings.Cut(res.stdout, "\n\n")
	out := map[string]map[string]string{}
	for _, row := range (cliResult{stdout: table}).rows(t) {
		out[row["NAME"]] = row
	}
	return out
}

// summaryLine is the last line of an import's output.
func summaryLine(res cliResult) string {
	lines := strings.Split(strings.TrimRight(res.stdout, "\n"), "\n")
	return lines[len(lines)-1]
}

// TestImportWritesOnlyWhatChanged drives recur import's writing against a
// real recur, with resources as a reader returns them: a dry run writes
// nothing and plans each resource; an import creates what is complete,
// skips what needs the user and reports what the API refuses; the same
// import again writes nothing; a secret changed in the files is an update.
func TestImportWritesOnlyWhatChanged(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: it imports into a real recur (about 5 s)")
	}
	clearClientEnv(t)
	st, err := recurtest.Start()
	require.NoError(t, err)
	t.Cleanup(st.Stop)
	password := "first secret"
	job := func(name, uri string) migrate.Resource {
		body, err := json.Marshal(map[string]any{"properties": map[string]any{
			"startTime": "2030-01-01T00:00:00Z",
			"action": map[string]any{"type": "Https", "request": map[string]any{"uri": uri, "method": "POST",
				"authentication": map[string]any{"type": "Basic", "username": "u", "password": password}}},
			"recurrence": map[string]any{"frequency": "Day"}}})
		require.NoError(t, err)
		return migrate.Resource{Kind: migrate.Job, Collection: "reports", Job: name, Body: body,
			Source: migrate.Source{File: "main.tf", Path: "azurerm_scheduler_job." + name, Line: 3}}
	}
	withResources(t, func() []migrate.Resource {
		needy := job("needy", "https://example.com/")
		needy.Missing = []migrate.Missing{{Name: "var.key", Path: "action_web.authentication_basic.password", Reason: "the variable has no value"}}
		elsewhere := job("elsewhere", "https://example.com/")
		elsewhere.Collection = "other"
		return []migrate.Resource{
			job("nightly", "https://example.com/nightly"),
			needy,
			job("broken", "ftp://example.com/"),
			elsewhere,
			{Kind: migrate.Collection, Collection: "reports", Body: json.RawMessage(`{"location":"westeurope","properties":{"sku":{"name":"Standard"}}}`),
				Source: migrate.Source{File: "main.tf", Path: "azurerm_scheduler_job_collection.reports", Line: 1}},
		}
	})
	file := filepath.Join(t.TempDir(), "main.tf")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	args := []string{"import", "--server", st.API.URL, "--subscription", "sub1", "--resource-group", "rg1", file}

	res := recurCLI(t, "", append(args, "--dry-run")...)
	require.Equal(t, 1, res.code, "a plan with a skipped and a failing resource: %s", res)
	rows := byName(t, res)
	require.Equal(t, "create", rows["reports"]["RESULT"], "%s", res)
	require.Equal(t, "create", rows["reports/nightly"]["RESULT"], "%s", res)
	require.Equal(t, "skip", rows["reports/needy"]["RESULT"], "%s", res)
	require.Equal(t, "needs var.key", rows["reports/needy"]["DETAIL"])
	require.Equal(t, "fail", rows["reports/broken"]["RESULT"], "%s", res)
	require.Contains(t, rows["reports/broken"]["DETAIL"], "properties.action.request.uri")
	require.Equal(t, "fail", rows["other/elsewhere"]["RESULT"], "no collection other: %s", res)
	require.Contains(t, res.stdout, "action_web.authentication_basic.password needs var.key")
	require.Equal(t, "dry run, nothing written: 2 create, 0 update, 0 unchanged, 1 skip, 2 fail", summaryLine(res))
	require.NotContains(t, res.stdout+res.stderr, password, "no secret is ever printed")
	got := recurCLI(t, "", "collections", "get", "reports", "--server", st.API.URL, "--subscription", "sub1", "--resource-group", "rg1")
	require.Equal(t, 1, got.code, "the dry run created nothing: %s", got)

	res = recurCLI(t, "", args...)
	require.Equal(t, 1, res.code, "%s", res)
	rows = byName(t, res)
	require.Equal(t, "created", rows["reports"]["RESULT"], "%s", res)
	require.Equal(t, "created", rows["reports/nightly"]["RESULT"], "%s", res)
	require.Equal(t, "skipped", rows["reports/needy"]["RESULT"], "%s", res)
	require.Equal(t, "failed", rows["reports/broken"]["RESULT"], "%s", res)
	require.Equal(t, "main.tf:3 (azurerm_scheduler_job.nightly)", rows["reports/nightly"]["SOURCE"])
	require.Equal(t, "2 created, 0 updated, 0 unchanged, 1 skipped, 2 failed", summaryLine(res))

	for _, dry := range []bool{true, false} {
		a := args
		if dry {
			a = append(a, "--dry-run")
		}
		res = recurCLI(t, "", a...)
		rows = byName(t, res)
		require.Equal(t, "unchanged", rows["reports"]["RESULT"], "%s", res)
		require.Equal(t, "unchanged", rows["reports/nightly"]["RESULT"], "the second import writes nothing: %s", res)
	}

	password = "second secret"
	res = recurCLI(t, "", append(args, "--dry-run")...)
	require.Equal(t, "update", byName(t, res)["reports/nightly"]["RESULT"], "a secret changed in the files: %s", res)
	res = recurCLI(t, "", args...)
	rows = byName(t, res)
	require.Equal(t, "unchanged", rows["reports"]["RESULT"], "%s", res)
	require.Equal(t, "updated", rows["reports/nightly"]["RESULT"], "%s", res)
}

func TestImportFlags(t *testing.T) {
	clearClientEnv(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--subscription", "s"}, "name at least one FILE"},
		{[]string{"a.json"}, "no subscription given: use --subscription or RECUR_SUBSCRIPTION"},
		{[]string{"--subscription", "s", "--concurrency", "0", "a.json"}, "--concurrency 0: want 1 to 64"},
		{[]string{"--subscription", "s", "--set", "novalue", "a.json"}, `"novalue": want NAME=VALUE`},
	} {
		res := recurCLI(t, "", append([]string{"import"}, c.args...)...)
		require.Equal(t, 2, res.code, "%v: %s", c.args, res)
		require.Contains(t, res.stderr, c.want, "%v", c.args)
	}
	res := recurCLI(t, "", "import", "-h")
	require.Equal(t, 0, res.code, "%s", res)
	require.Contains(t, res.stdout, "-dry-run")
}
