package bicep

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/migrate"
)

// standIn writes a stand-in for a Bicep CLI, a shell script whose body
// is body, into a directory of its own and returns its path. No Bicep
// CLI installs from the registries the tests reach: the stand-ins follow
// the CLIs' documented interface, and the test checks that recur runs
// them as documented. Each records its arguments, one a line, in
// args beside it.
func standIn(t *testing.T, name, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	script := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > \"$(dirname \"$0\")/args\"\n" + body + "\n"
	require.NoError(t, os.WriteFile(path, []byte(script), 0o700))
	return path
}

// printing is a stand-in's body that prints the template of
// testdata/scheduler.bicep, as bicep build --stdout does.
func printing(t *testing.T) string {
	t.Helper()
	template, err := os.ReadFile(filepath.Join("testdata", "scheduler.json"))
	require.NoError(t, err)
	return "cat <<'TEMPLATE'\n" + string(template) + "TEMPLATE"
}

func args(t *testing.T, standIn string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(filepath.Dir(standIn), "args"))
	require.NoError(t, err)
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

func budget() *migrate.Budget { return migrate.NewBudget(migrate.DefaultLimits) }

// source copies testdata/scheduler.bicep into a directory of its own as
// name.
func source(t *testing.T, name string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", "scheduler.bicep"))
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), src, 0o600))
	return filepath.Join(dir, name)
}

// TestBuildRunsTheDocumentedCommand builds with bicep and with az as
// their documentation prints a template, a file named like a flag
// included, and reads what they print.
func TestBuildRunsTheDocumentedCommand(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("testdata", "scheduler.json"))
	require.NoError(t, err)
	dir := filepath.Dir(source(t, "main.bicep"))
	src, err := os.ReadFile(filepath.Join(dir, "main.bicep"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "-x.bicep"), src, 0o600))
	body := printing(t)
	t.Chdir(dir)
	for _, c := range []struct {
		cli  string
		az   bool
		file string
		want []string
	}{
		{"bicep", false, "main.bicep", []string{"build", "main.bicep", "--stdout", "--no-restore"}},
		{"az", true, "main.bicep", []string{"bicep", "build", "--file", "main.bicep", "--stdout", "--no-restore"}},
		{"bicep", false, "-x.bicep", []string{"build", "./-x.bicep", "--stdout", "--no-restore"}},
	} {
		cli := CLI{Path: standIn(t, c.cli, body), Az: c.az, Timeout: time.Minute}
		b := budget()
		got, err := cli.Build(context.Background(), c.file, b)
		require.NoError(t, err, "%s %s", c.cli, c.file)
		assert.Equal(t, string(want), string(got))
		assert.Equal(t, c.want, args(t, cli.Path))
		assert.Equal(t, []string{c.file, c.file + " (as " + c.cli + " builds it)"}, b.Files())
	}
}

func TestFind(t *testing.T) {
	look := func(found ...string) func(string) (string, error) {
		return func(name string) (string, error) {
			for _, f := range found {
				if f == name {
					return "/opt/" + name, nil
				}
			}
			return "", exec.ErrNotFound
		}
	}
	cli, ok := Find(look("az", "bicep"))
	assert.True(t, ok)
	assert.Equal(t, CLI{Path: "/opt/bicep", Timeout: DefaultTimeout}, cli, "bicep itself first")
	cli, ok = Find(look("az"))
	assert.True(t, ok)
	assert.Equal(t, CLI{Path: "/opt/az", Az: true, Timeout: DefaultTimeout}, cli)
	_, ok = Find(look())
	assert.False(t, ok)
}

// TestBuildFailureShowsStderr shows what a failed build said, without
// the control characters that could rewrite the terminal.
func TestBuildFailureShowsStderr(t *testing.T) {
	cli := CLI{Path: standIn(t, "bicep", `printf '%s\033[2J\n' "main.bicep(3,7) : Error BCP018: Expected the \"=\" character at this location." >&2; exit 1`), Timeout: time.Minute}
	file := source(t, "main.bicep")
	_, err := cli.Build(context.Background(), file, budget())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "build "+file+": bicep build FILE --stdout --no-restore failed (exit status 1); its stderr:\n"+
		`main.bicep(3,7) : Error BCP018: Expected the "=" character at this location.[2J`)
	assert.NotContains(t, err.Error(), "\033")

	cli = CLI{Path: standIn(t, "bicep", "exit 3"), Timeout: time.Minute}
	_, err = cli.Build(context.Background(), file, budget())
	assert.ErrorContains(t, err, "failed (exit status 3); it wrote nothing to stderr")
}

// TestBuildIsBounded stops a CLI that prints more than a template may
// be, and one that does not finish.
func TestBuildIsBounded(t *testing.T) {
	file := source(t, "main.bicep")
	limits := migrate.DefaultLimits
	limits.TemplateBytes = 64 << 10
	cli := CLI{Path: standIn(t, "bicep", "exec yes '{}'"), Timeout: time.Minute}
	_, err := cli.Build(context.Background(), file, migrate.NewBudget(limits))
	require.True(t, migrate.IsLimit(err), "%v", err)
	assert.ErrorContains(t, err, file+" (as bicep builds it) is larger than 64 KiB: over recur import's limit of 64 KiB for an ARM template or parameters file")

	cli = CLI{Path: standIn(t, "bicep", "exec sleep 600"), Timeout: 100 * time.Millisecond}
	_, err = cli.Build(context.Background(), file, budget())
	assert.ErrorContains(t, err, "bicep build FILE --stdout --no-restore did not finish within 100ms, and was stopped")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = cli.Build(ctx, file, budget())
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)
}

// TestBuildRefusesWhatReadsOtherFiles refuses, without running the CLI,
// a Bicep file whose build would read other files or the environment,
// and builds one that only names them in passing.
func TestBuildRefusesWhatReadsOtherFiles(t *testing.T) {
	cli := CLI{Path: standIn(t, "bicep", printing(t)), Timeout: time.Minute}
	for _, c := range []struct{ text, what string }{
		{"var token = loadTextContent('../../.azure/msal_token_cache.json')", "loadTextContent"},
		{"var pfx = sys.loadFileAsBase64('client.pfx')", "loadFileAsBase64"},
		{"var cfg = LoadJsonContent ('cfg.json')", "LoadJsonContent"},
		{"var files = loadDirectoryFileInfo('.')", "loadDirectoryFileInfo"},
		{"module jobs './jobs.bicep' = {\n  name: 'jobs'\n}", "module"},
		{"  module jobs 'br:contoso.azurecr.io/jobs:v1' = {}", "module"},
		{"import { retry } from 'shared.bicep'", "import"},
		{"import * as shared from 'shared.bicep'", "import"},
		{"extension microsoftGraphV1", "extension"},
		{"var home = readEnvironmentVariable('HOME')", "readEnvironmentVariable"},
	} {
		file := source(t, "main.bicep")
		src, err := os.ReadFile(file)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(file, append(append(src, "\n"...), c.text+"\n"...), 0o600))
		_, err = cli.Build(context.Background(), file, budget())
		require.Error(t, err, c.text)
		line := strings.Count(string(src), "\n") + 2
		assert.Contains(t, err.Error(), file+":"+strconv.Itoa(line)+": "+c.what+" makes the Bicep CLI read another file", c.text)
		assert.Contains(t, err.Error(), "  az bicep build --file "+file+"    (or: bicep build "+file+")\n  recur import [flags] "+strings.TrimSuffix(file, ".bicep")+".json")
		_, err = os.Stat(filepath.Join(filepath.Dir(cli.Path), "args"))
		assert.True(t, errors.Is(err, os.ErrNotExist), "%s: the CLI never ran", c.text)
	}
	for _, text := range []string{
		"var notes = {\n  module: 'billing'\n  import: true\n}",
		"var url = 'https://example.com/download(1)'",
		"// see https://learn.microsoft.com/azure/azure-resource-manager/bicep/modules",
	} {
		file := source(t, "main.bicep")
		src, err := os.ReadFile(file)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(file, append(append(src, "\n"...), text+"\n"...), 0o600))
		_, err = cli.Build(context.Background(), file, budget())
		assert.NoError(t, err, text)
	}
}

func TestHowToBuildQuotes(t *testing.T) {
	assert.Equal(t, "  az bicep build --file 'my jobs/main.bicep'    (or: bicep build 'my jobs/main.bicep')\n"+
		"  az bicep build --file ops.bicep    (or: bicep build ops.bicep)\n"+
		"  recur import [flags] 'my jobs/main.json' ops.json", HowToBuild([]string{"my jobs/main.bicep", "ops.bicep"}))
}
