package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/internal/syncbuf"
	"github.com/recurhq/recur/jobs"
)

// importConfig is a Terraform configuration of the collection c and its
// jobs, each named and with the body expression given.
func importConfig(locals string, bodies map[string]string) string {
	out := "locals {\n" + locals + "\n}\n" + `
resource "azurerm_scheduler_job_collection" "c" {
  name                = "c"
  resource_group_name = "rg1"
  location            = "westeurope"
  sku                 = "standard"
}
`
	for name, body := range bodies {
		out += fmt.Sprintf(`
resource "azurerm_scheduler_job" %[1]q {
  name                = %[1]q
  resource_group_name = "rg1"
  job_collection_name = azurerm_scheduler_job_collection.c.name
  start_time          = "2030-01-01T00:00:00Z"
  action_web {
    url    = "https://example.com/"
    method = "post"
    body   = %[2]s
  }
  recurrence {
    frequency = "day"
  }
}
`, name, body)
	}
	return out
}

// writeFiles writes files into a new directory and returns it.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		path := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
		require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	}
	return dir
}

// TestImportReadsOnlyItsOwnFilesWithinLimits imports, into a real recur,
// files that reach out of their configuration or past a limit: each import
// fails before its first write, naming the path or the limit, and nothing
// is created. A configuration reading a file of its own imports, and its
// dry run lists every file it read. A report of an expression megabytes
// long quotes it shortened.
func TestImportReadsOnlyItsOwnFilesWithinLimits(t *testing.T) {
	st := startRecur(t)
	at := []string{"--server", st.API.URL, "--subscription", "sub1"}
	secret := filepath.Join(t.TempDir(), "secret.txt")
	require.NoError(t, os.WriteFile(secret, []byte("RECUR_TOKEN=stolen"), 0o600))
	doubling := `l0 = "aaaaaaaaaaaaaaaa"`
	for i := 1; i <= 39; i++ {
		doubling += fmt.Sprintf("\nl%d = \"${local.l%d}${local.l%d}\"", i, i-1, i-1)
	}

	for _, c := range []struct {
		name   string
		body   string
		locals string
		setup  func(dir string)
		want   []string
	}{
		{name: "the environment", body: `filebase64("/proc/self/environ")`, want: []string{`filebase64("/proc/self/environ")`, "/proc/self/environ", "outside"}},
		{name: "an absolute path", body: `file("/etc/passwd")`, want: []string{`file("/etc/passwd")`, "it reads /etc/passwd"}},
		{name: "dot dots", body: `file("../../../../../../etc/hostname")`, want: []string{`file("../../../../../../etc/hostname")`, "/etc/hostname"}},
		{name: "a link out", body: `file("link.txt")`, want: []string{`file("link.txt")`, "a link to " + secret},
			setup: func(dir string) { require.NoError(t, os.Symlink(secret, filepath.Join(dir, "link.txt"))) }},
		{name: "doubling locals", body: "local.l39", locals: doubling, want: []string{`"${local.l16}${local.l16}"`, "limit of 1 MiB for a value"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"main.tf": importConfig(c.locals, map[string]string{"j": c.body})})
			if c.setup != nil {
				c.setup(dir)
			}
			for _, dry := range []bool{true, false} {
				args := append([]string{"import", dir}, at...)
				if dry {
					args = append(args, "--dry-run")
				}
				res := recurCLI(t, "", args...)
				require.Equal(t, 2, res.code, "%s", res)
				for _, w := range c.want {
					require.Contains(t, res.stderr, w)
				}
				require.Empty(t, res.stdout, "no row: nothing was tried")
				require.NotContains(t, res.stderr, "stolen")
			}
			got := recurCLI(t, "", append([]string{"collections", "get", "c", "--resource-group", "rg1"}, at...)...)
			require.Equal(t, 1, got.code, "nothing was created: %s", got)
		})
	}

	t.Run("a template larger than Azure deploys", func(t *testing.T) {
		big := filepath.Join(t.TempDir(), "big.json")
		require.NoError(t, os.WriteFile(big, []byte(`{"variables": {"pad": "`+strings.Repeat("p", 5<<20)+`"}, "resources": []}`), 0o600))
		res := recurCLI(t, "", append([]string{"import", big, "--resource-group", "rg1"}, at...)...)
		require.Equal(t, 2, res.code, "%s", res)
		require.Contains(t, res.stderr, "big.json is 5.0 MiB: over recur import's limit of 4 MiB for an ARM template or parameters file")
	})

	t.Run("a file of its own", func(t *testing.T) {
		dir := writeFiles(t, map[string]string{
			"main.tf":             "variable \"payload\" {}\n" + importConfig("", map[string]string{"j": `file("${path.module}/bodies/${var.payload}")`}),
			"terraform.tfvars":    `payload = "nightly.json"`,
			"bodies/nightly.json": `{"report": "nightly"}`,
		})
		res := recurCLI(t, "", append([]string{"import", dir, "--dry-run"}, at...)...)
		require.Equal(t, 0, res.code, "%s", res)
		require.Contains(t, res.stdout, "Files read:\n  "+filepath.Join(dir, "main.tf")+"\n  "+filepath.Join(dir, "terraform.tfvars")+
			"\n  "+filepath.Join(dir, "bodies", "nightly.json")+"\n")
		res = recurCLI(t, "", append([]string{"import", dir}, at...)...)
		require.Equal(t, 0, res.code, "%s", res)
		require.Equal(t, "2 created, 0 updated, 0 unchanged, 0 skipped, 0 failed", summaryLine(res))
		require.NotContains(t, res.stdout, "Files read:", "only a dry run lists them")
		job := recurCLI(t, "", append([]string{"jobs", "get", "j", "--collection", "c", "--resource-group", "rg1", "-o", "json"}, at...)...)
		require.Equal(t, 0, job.code, "%s", job)
		require.Contains(t, job.stdout, `"body": "{\"report\": \"nightly\"}"`)
	})

	t.Run("a report of a deep expression", func(t *testing.T) {
		deep := "[" + strings.Repeat("concat(", 100000) + "'a'" + strings.Repeat(")", 100000) + "]"
		var headers []string
		for i := range 300 {
			headers = append(headers, fmt.Sprintf(`"h%d": "[variables('deep')]"`, i))
		}
		template := filepath.Join(t.TempDir(), "deep.json")
		require.NoError(t, os.WriteFile(template, []byte(`{"variables": {"deep": "`+deep+`"}, "resources": [{
  "type": "Microsoft.Scheduler/jobCollections/jobs", "apiVersion": "2016-03-01", "name": "c/deep",
  "properties": {"action": {"type": "Https", "request": {"uri": "https://x.example", "method": "GET",
    "headers": {`+strings.Join(headers, ", ")+`}}}, "recurrence": {"frequency": "Hour"}}}]}`), 0o600))
		res := recurCLI(t, "", append([]string{"import", template, "--resource-group", "rg1", "--dry-run"}, at...)...)
		require.Equal(t, 1, res.code, "%s", res)
		require.Less(t, len(res.stdout)+len(res.stderr), 64<<10, "the report is short")
		require.Contains(t, res.stdout, "… (800005 bytes): the expression does not parse: the expression nests deeper than 100"+
			" (supply it with --set 'resources[0].properties.action.request.headers.h0=VALUE')", "too long to give by its text, the value is given by its place")
		require.Contains(t, res.stdout, "and 200 more: the DETAIL column names them")
	})
}

// importProcess runs `recur import` as a child process, the real binary,
// which a test signals.
func importProcess(t *testing.T, args ...string) (*exec.Cmd, *syncbuf.Buffer, *syncbuf.Buffer, chan error) {
	t.Helper()
	cmd := exec.Command(buildRecur(t), append([]string{"import"}, args...)...)
	cmd.Env = append(os.Environ(), "RECUR_TOKEN=", "RECUR_SUBSCRIPTION=", "RECUR_RESOURCE_GROUP=", "RECUR_SERVER=")
	stdout, stderr := &syncbuf.Buffer{}, &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-done
		}
	})
	return cmd, stdout, stderr, done
}

// exited waits for the import to end after a signal and returns its exit
// status.
func exited(t *testing.T, done chan error, stdout, stderr *syncbuf.Buffer) int {
	t.Helper()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		require.NoError(t, err)
		return 0
	case <-time.After(60 * time.Second):
		t.Fatalf("recur import did not stop within 60s of the signal:\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	return -1
}

// TestImportStopsWhileReading sends SIGTERM to the real binary while it
// reads a var file that never comes (a pipe no one writes): it stops at
// once, saying it wrote nothing.
func TestImportStopsWhileReading(t *testing.T) {
	dir := writeFiles(t, map[string]string{"main.tf": importConfig("", map[string]string{"j": `"x"`})})
	fifo := filepath.Join(t.TempDir(), "vars.tfvars")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	var err error
	cmd, stdout, stderr, done := importProcess(t, dir, "--var-file", fifo, "--subscription", "sub1", "--server", "http://127.0.0.1:1")
	// A pipe opens for writing, without blocking, only once a reader has
	// it open: then the import is reading, its signal handler long set.
	var writer *os.File
	require.Eventually(t, func() bool {
		writer, err = os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		return err == nil
	}, 60*time.Second, 20*time.Millisecond, "recur import never opened %s:\n%s", fifo, stderr)
	t.Cleanup(func() { writer.Close() })
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.Equal(t, 1, exited(t, done, stdout, stderr), "stderr:\n%s", stderr)
	require.Equal(t, "recur import: interrupted while reading the files; nothing was written\n", stderr.String())
	require.Empty(t, stdout.String())
}

// TestImportStopsWhileWriting sends SIGINT to the real binary while one of
// its job PUTs is in flight to a real recur (a proxy in front holds the
// jobs' PUTs): it stops at once, its table saying the collection was
// created and the jobs were not, and recur holds the collection alone.
func TestImportStopsWhileWriting(t *testing.T) {
	st := startRecur(t)
	target, err := url.Parse(st.API.URL)
	require.NoError(t, err)
	forward := httputil.NewSingleHostReverseProxy(target)
	held := make(chan struct{}, 1)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The import's check sends what-if PUTs, which write nothing:
		// they go through, the writes are held.
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/jobs/") && r.Header.Get("Recur-Apply") != string(jobs.ApplyWhatIf) {
			// Read to the body's end, so that the server sees the
			// client go.
			_, _ = io.Copy(io.Discard, r.Body)
			select {
			case held <- struct{}{}:
			default:
			}
			<-r.Context().Done()
			return
		}
		forward.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)

	dir := writeFiles(t, map[string]string{"main.tf": importConfig("", map[string]string{"a": `"a"`, "b": `"b"`, "c": `"c"`})})
	cmd, stdout, stderr, done := importProcess(t, dir, "--subscription", "sub1", "--server", proxy.URL, "--concurrency", "1")
	select {
	case <-held:
	case err := <-done:
		t.Fatalf("recur import ended (%v) before its first job's PUT:\n%s\n%s", err, stdout, stderr)
	case <-time.After(60 * time.Second):
		t.Fatalf("no job's PUT within 60s:\n%s\n%s", stdout, stderr)
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	require.Equal(t, 1, exited(t, done, stdout, stderr), "stdout:\n%s\nstderr:\n%s", stdout, stderr)

	res := cliResult{stdout: stdout.String()}
	rows := byName(t, res)
	require.Equal(t, "created", rows["c"]["RESULT"], "%s", res.stdout)
	for _, job := range []string{"c/a", "c/b", "c/c"} {
		require.Equal(t, "stopped", rows[job]["RESULT"], "%s", res.stdout)
	}
	require.Equal(t, "interrupted: 1 created, 0 updated, 0 unchanged, 0 skipped, 0 failed, 3 stopped", summaryLine(res))
	require.Equal(t, "interrupted while its PUT was in flight: recur may have written it", rows["c/a"]["DETAIL"])
	require.Equal(t, "not sent: the import was interrupted", rows["c/c"]["DETAIL"])
	require.Contains(t, stderr.String(), "recur import: interrupted")

	at := []string{"--server", st.API.URL, "--subscription", "sub1", "--resource-group", "rg1"}
	require.Equal(t, 0, recurCLI(t, "", append([]string{"collections", "get", "c"}, at...)...).code, "the collection was written")
	list := recurCLI(t, "", append([]string{"jobs", "list", "--collection", "c", "-o", "json"}, at...)...)
	require.Equal(t, 0, list.code, "%s", list)
	require.Equal(t, []any{}, list.json(t)["value"], "no job was written")
}
