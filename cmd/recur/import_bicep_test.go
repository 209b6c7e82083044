package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// bicepStandIn puts a stand-in for a Bicep CLI named name (bicep or az)
// first on PATH, a shell script that records its arguments and its
// exported environment beside it (args, env) and then runs body, with
// the shell's builtins alone: PATH may hold nothing else. No Bicep CLI
// installs from the registries the tests reach, so recur's builds are
// tested against stand-ins that follow the CLIs' documented interface.
// It returns the stand-in's directory.
func bicepStandIn(t *testing.T, name, body string) string {
	t.Helper()
	dir := t.TempDir()
	script := "#!/bin/sh\nd=${0%/*}\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > \"$d/args\"\nexport -p > \"$d/env\"\n" + body + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(script), 0o700))
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return dir
}

// printsTemplate is a stand-in's body that prints the ARM template of
// migrate/bicep/testdata/scheduler.bicep, as a build with --stdout does.
func printsTemplate(t *testing.T) string {
	t.Helper()
	template, err := os.ReadFile(filepath.Join("..", "..", "migrate", "bicep", "testdata", "scheduler.json"))
	require.NoError(t, err)
	return "printf '%s' '" + strings.ReplaceAll(string(template), "'", `'\''`) + "'"
}

// bicepFile copies migrate/bicep/testdata/scheduler.bicep into a
// directory of its own as main.bicep.
func bicepFile(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", "migrate", "bicep", "testdata", "scheduler.bicep"))
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "main.bicep")
	require.NoError(t, os.WriteFile(file, src, 0o600))
	return file
}

func lines(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// TestImportOfNothingItReadsIsAnError refuses, before any write, Bicep
// without a Bicep CLI to build it (saying how to build it by hand), a
// directory with nothing recur reads, and files that define nothing:
// none is an empty success.
func TestImportOfNothingItReadsIsAnError(t *testing.T) {
	clearClientEnv(t)
	t.Setenv("PATH", t.TempDir())
	file := bicepFile(t)
	dir := filepath.Dir(file)
	how := "  az bicep build --file " + file + "    (or: bicep build " + file + ")\n  recur import [flags] " + filepath.Join(dir, "main.json")
	at := []string{"--subscription", "s", "--server", "http://127.0.0.1:1"}
	for _, args := range [][]string{{file}, {dir}} {
		res := recurCLI(t, "", append(append([]string{"import"}, at...), args...)...)
		require.Equal(t, 2, res.code, "%s", res)
		require.Equal(t, "recur import: "+file+": recur reads Bicep through a Bicep CLI (bicep, or az), and none is on PATH; "+
			"build the ARM templates, then import them:\n"+how+"\n", res.stderr)
		require.Empty(t, res.stdout, "nothing was tried")
	}

	standIn := bicepStandIn(t, "bicep", printsTemplate(t))
	res := recurCLI(t, "", append(append([]string{"import", "--bicep", "off"}, at...), file)...)
	require.Equal(t, 2, res.code, "%s", res)
	require.Contains(t, res.stderr, "--bicep off runs none; build the ARM templates, then import them:\n"+how)
	_, err := os.Stat(filepath.Join(standIn, "args"))
	require.True(t, errors.Is(err, os.ErrNotExist), "--bicep off runs no CLI")
	res = recurCLI(t, "", append(append([]string{"import", "--bicep", "on"}, at...), file)...)
	require.Equal(t, 2, res.code, "%s", res)
	require.Contains(t, res.stderr, `invalid value "on" for flag -bicep: "on": want auto or off`)

	other := t.TempDir()
	for _, name := range []string{"azuredeploy.json", "azuredeploy.parameters.json", "README.md", "terraform.tfvars"} {
		require.NoError(t, os.WriteFile(filepath.Join(other, name), []byte("{}"), 0o600))
	}
	res = recurCLI(t, "", append(append([]string{"import"}, at...), other)...)
	require.Equal(t, 2, res.code, "%s", res)
	require.Equal(t, "recur import: "+other+": recur import reads a directory's Terraform (.tf) and Bicep (.bicep) files, "+
		"and it holds none (2 .json files, 1 .md file, 1 .tfvars file): name ARM templates (.json) themselves\n", res.stderr)

	empty := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(empty, "main.tf"), []byte(`resource "azurerm_resource_group" "rg" {
  name     = "ops"
  location = "westeurope"
}
`), 0o600))
	res = recurCLI(t, "", append(append([]string{"import"}, at...), empty)...)
	require.Equal(t, 2, res.code, "%s", res)
	require.Equal(t, "recur import: the files define no job collection or job (Microsoft.Scheduler/jobCollections, "+
		"azurerm_scheduler_job_collection, or their jobs): read "+filepath.Join(empty, "main.tf")+"\n", res.stderr)
}

// TestImportBuildsBicep imports a Bicep file into a real recur through a
// stand-in of each Bicep CLI, run as documented; a CLI's failure fails
// the import before any write, showing what the CLI said.
func TestImportBuildsBicep(t *testing.T) {
	st := startRecur(t)
	t.Setenv("RECUR_STANDIN_SEES", "no")
	file := bicepFile(t)
	at := []string{"--server", st.API.URL, "--subscription", "sub1", "--resource-group", "rg1", "--set", "hookPassword=s3cret"}
	names := []string{"bicep-ops", "bicep-ops/nightly", "bicep-ops/weekly"}

	standIn := bicepStandIn(t, "bicep", printsTemplate(t))
	res := recurCLI(t, "", append([]string{"import", file, "--dry-run"}, at...)...)
	require.Equal(t, 0, res.code, "%s", res)
	require.Contains(t, res.stdout, "\nFiles read:\n  "+file+"\n  "+file+" (as bicep builds it)\n")
	res = recurCLI(t, "", append([]string{"import", file}, at...)...)
	require.Equal(t, 0, res.code, "%s", res)
	rows := byName(t, res)
	require.Len(t, rows, len(names), "%s", res)
	for i, name := range names {
		require.Equal(t, "created", rows[name]["RESULT"], "%s: %s", name, res)
		require.Equal(t, fmt.Sprintf("%s (resources[%d])", file, i), rows[name]["SOURCE"], "no line: the template's are not the file's")
	}
	require.Equal(t, []string{"build", file, "--stdout", "--no-restore"}, lines(t, filepath.Join(standIn, "args")))
	env := strings.Join(lines(t, filepath.Join(standIn, "env")), "\n")
	require.Contains(t, env, "export PATH=")
	require.NotContains(t, env, "RECUR_", "recur's own variables are not the CLI's")

	// With az alone on PATH, az builds it: nothing changes. The file
	// named and found in its directory named is built once.
	t.Setenv("PATH", t.TempDir())
	standIn = bicepStandIn(t, "az", printsTemplate(t))
	res = recurCLI(t, "", append([]string{"import", filepath.Dir(file), file}, at...)...)
	require.Equal(t, 0, res.code, "%s", res)
	require.Equal(t, "0 created, 0 updated, 3 unchanged, 0 skipped, 0 failed", summaryLine(res))
	require.Equal(t, []string{"bicep", "build", "--file", file, "--stdout", "--no-restore"}, lines(t, filepath.Join(standIn, "args")))

	bicepStandIn(t, "bicep", `echo "main.bicep(12,3) : Error BCP057: The name \"colection\" does not exist in the current context." >&2; exit 1`)
	res = recurCLI(t, "", append([]string{"import", file}, at...)...)
	require.Equal(t, 2, res.code, "%s", res)
	require.Contains(t, res.stderr, "recur import: build "+file+": bicep build FILE --stdout --no-restore failed (exit status 1); its stderr:\n"+
		`main.bicep(12,3) : Error BCP057: The name "colection" does not exist in the current context.`)
	require.Empty(t, res.stdout, "nothing was tried")
}
