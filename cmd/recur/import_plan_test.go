package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/internal/recurtest"
	"github.com/recurhq/recur/migrate"
)

// importResource is a resource as a reader returns it, body given as a
// value.
func importResource(t *testing.T, kind migrate.Kind, collection, job string, body any) migrate.Resource {
	t.Helper()
	data, err := json.Marshal(body)
	require.NoError(t, err)
	name := collection
	if job != "" {
		name += "/" + job
	}
	return migrate.Resource{Kind: kind, Collection: collection, Job: job, Body: data,
		Source: migrate.Source{File: "main.json", Path: name}}
}

// importJob is a job's body calling uri, with properties beside.
func importJob(uri string, props map[string]any) map[string]any {
	p := map[string]any{"action": map[string]any{"type": "Http", "request": map[string]any{"uri": uri, "method": "POST"}}}
	for k, v := range props {
		p[k] = v
	}
	return map[string]any{"properties": p}
}

// importCollection is a collection's body with a quota of maxJobs.
func importCollection(maxJobs int) map[string]any {
	return map[string]any{"location": "westeurope", "properties": map[string]any{"sku": map[string]any{"name": "Standard"},
		"quota": map[string]any{"maxJobCount": maxJobs}}}
}

// apiPut PUTs body to path on the stack's API, as a client outside the
// import would.
func apiPut(t *testing.T, st *recurtest.Stack, path string, body any) {
	t.Helper()
	data, err := json.Marshal(body)
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPut, st.API.URL+path+"?api-version=2016-03-01", bytes.NewReader(data))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode, path)
}

// importFile is an empty file for recur import to name: the resources
// come from withResources.
func importFile(t *testing.T) string {
	file := filepath.Join(t.TempDir(), "main.json")
	require.NoError(t, os.WriteFile(file, []byte("{}"), 0o600))
	return file
}

// TestImportIsAllOrNothing: an import checks every resource before it
// writes one, the jobs it adds to a collection against the collection's
// quota together (each alone would fit), and writes nothing when any
// fails; the dry run says the same; --partial writes what passes.
func TestImportIsAllOrNothing(t *testing.T) {
	st := startRecur(t)
	base := "/subscriptions/sub1/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/"
	apiPut(t, st, base+"small", importCollection(3))
	later := map[string]any{"startTime": "2030-01-01T00:00:00Z", "recurrence": map[string]any{"frequency": "Day"}}
	apiPut(t, st, base+"small/jobs/old", importJob("https://example.com/", later))

	withResources(t, func() []migrate.Resource {
		return []migrate.Resource{
			importResource(t, migrate.Job, "small", "a", importJob("https://example.com/a", later)),
			importResource(t, migrate.Job, "small", "b", importJob("https://example.com/b", later)),
			importResource(t, migrate.Job, "small", "c", importJob("https://example.com/c", later)),
			importResource(t, migrate.Collection, "fresh", "", importCollection(1)),
			importResource(t, migrate.Job, "fresh", "x", importJob("https://example.com/x", later)),
			importResource(t, migrate.Job, "fresh", "y", importJob("https://example.com/y", later)),
			importResource(t, migrate.Collection, "fine", "", importCollection(5)),
			importResource(t, migrate.Job, "fine", "ok", importJob("https://example.com/ok", later)),
		}
	})
	args := []string{"import", "--server", st.API.URL, "--subscription", "sub1", "--resource-group", "rg1", importFile(t)}
	exists := func(collection string) bool {
		res := recurCLI(t, "", "collections", "get", collection, "--server", st.API.URL, "--subscription", "sub1", "--resource-group", "rg1")
		return res.code == 0
	}

	for _, dry := range []bool{true, false} {
		a := append([]string{}, args...)
		if dry {
			a = append(a, "--dry-run")
		}
		res := recurCLI(t, "", a...)
		require.Equal(t, 1, res.code, "%s", res)
		rows := byName(t, res)
		for _, name := range []string{"small/a", "small/b", "small/c"} {
			require.Equal(t, map[bool]string{true: "fail", false: "failed"}[dry], rows[name]["RESULT"], "%s", res)
			require.Equal(t, "QuotaExceeded (properties.quota.maxJobCount): job collection small holds 1 jobs and the import adds 3, past its maximum of 3",
				rows[name]["DETAIL"])
		}
		require.Contains(t, rows["fresh/x"]["DETAIL"], "holds 0 jobs and the import adds 2, past its maximum of 1")
		if dry {
			require.Equal(t, "create", rows["fine"]["RESULT"], "%s", res)
			require.Equal(t, "create", rows["fine/ok"]["RESULT"], "%s", res)
			require.Equal(t, "dry run, nothing written: 3 create, 0 update, 0 unchanged, 0 skip, 5 fail", summaryLine(res))
			continue
		}
		require.Equal(t, "held", rows["fine"]["RESULT"], "%s", res)
		require.Equal(t, "held", rows["fine/ok"]["RESULT"], "%s", res)
		require.Equal(t, "held", rows["fresh"]["RESULT"], "%s", res)
		require.Contains(t, summaryLine(res), "nothing written, all or nothing")
	}
	require.False(t, exists("fine"), "nothing was written")
	require.False(t, exists("fresh"), "nothing was written")

	res := recurCLI(t, "", append(args, "--partial")...)
	require.Equal(t, 1, res.code, "%s", res)
	rows := byName(t, res)
	require.Equal(t, "created", rows["fine"]["RESULT"], "%s", res)
	require.Equal(t, "created", rows["fine/ok"]["RESULT"], "%s", res)
	require.Equal(t, "created", rows["fresh"]["RESULT"], "%s", res)
	require.Equal(t, "failed", rows["small/a"]["RESULT"], "%s", res)
	require.Equal(t, "3 created, 0 updated, 0 unchanged, 0 skipped, 5 failed", summaryLine(res))
}

// TestImportCutover: an import never calls a target by surprise. A
// one-time job whose time has passed ran where it came from: it is written
// completed, and runs only with --run-past. Every job whose first run would
// come at once is listed, in the dry run too. --disabled writes every job
// disabled; the same import without it, at the cutover, enables those the
// files enable, and only then do they run.
func TestImportCutover(t *testing.T) {
	st := startRecur(t)
	var mu sync.Mutex
	calls := map[string]int{} // by path: /collection/job
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		calls[r.URL.Path]++
	}))
	t.Cleanup(target.Close)
	called := func(path string) int {
		mu.Lock()
		defer mu.Unlock()
		return calls[path]
	}
	past := map[string]any{"startTime": "2020-01-01T00:00:00Z"}
	hourly := map[string]any{"recurrence": map[string]any{"frequency": "Hour"}}
	resources := func(collection string) []migrate.Resource {
		return []migrate.Resource{
			importResource(t, migrate.Collection, collection, "", importCollection(10)),
			importResource(t, migrate.Job, collection, "once-past", importJob(target.URL+"/"+collection+"/once-past", past)),
			importResource(t, migrate.Job, collection, "once-now", importJob(target.URL+"/"+collection+"/once-now", nil)),
			importResource(t, migrate.Job, collection, "hourly", importJob(target.URL+"/"+collection+"/hourly", hourly)),
			importResource(t, migrate.Job, collection, "paused", importJob(target.URL+"/"+collection+"/paused", map[string]any{"state": "Disabled",
				"recurrence": map[string]any{"frequency": "Hour"}})),
		}
	}
	collection := "cut"
	withResources(t, func() []migrate.Resource { return resources(collection) })
	args := []string{"import", "--server", st.API.URL, "--subscription", "sub1", "--resource-group", "rg1", importFile(t)}
	state := func(job string) string {
		t.Helper()
		res := recurCLI(t, "", "jobs", "get", job, "--collection", collection, "--server", st.API.URL, "--subscription", "sub1",
			"--resource-group", "rg1", "-o", "json")
		require.Equal(t, 0, res.code, "%s", res)
		var got map[string]any
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &got), res.stdout)
		return got["properties"].(map[string]any)["state"].(string)
	}

	res := recurCLI(t, "", append(args, "--dry-run")...)
	require.Equal(t, 0, res.code, "%s", res)
	rows := byName(t, res)
	require.Contains(t, rows["cut/once-past"]["DETAIL"], "written completed")
	require.Contains(t, rows["cut/once-now"]["DETAIL"], "written completed")
	require.Contains(t, res.stdout, "Jobs that would run as soon as they are written:\n  job cut/hourly: a recurring job without a start time\n")

	res = recurCLI(t, "", append(args, "--disabled")...)
	require.Equal(t, 0, res.code, "%s", res)
	require.NotContains(t, res.stdout, "as soon as they are written", "nothing runs: %s", res)
	require.Equal(t, "completed", state("once-past"))
	require.Equal(t, "completed", state("once-now"))
	require.Equal(t, "disabled", state("hourly"))
	require.Equal(t, "disabled", state("paused"))

	// The cutover: the same import without --disabled.
	res = recurCLI(t, "", args...)
	require.Equal(t, 0, res.code, "%s", res)
	rows = byName(t, res)
	require.Equal(t, "unchanged", rows["cut/once-past"]["RESULT"], "a completed job given completed again: %s", res)
	require.Equal(t, "updated", rows["cut/hourly"]["RESULT"], "%s", res)
	require.Equal(t, "unchanged", rows["cut/paused"]["RESULT"], "the files disable it: %s", res)
	require.Contains(t, res.stdout, "Jobs that run as soon as they are written:\n  job cut/hourly: a recurring job without a start time\n")
	require.Equal(t, "enabled", state("hourly"))
	require.Equal(t, "disabled", state("paused"))
	require.Eventually(t, func() bool { return called("/cut/hourly") == 1 }, 30*time.Second, 50*time.Millisecond, "the cutover runs the hourly job")

	collection = "rerun"
	res = recurCLI(t, "", append(args, "--run-past")...)
	require.Equal(t, 0, res.code, "%s", res)
	require.Contains(t, res.stdout, "  job rerun/once-past: a one-time job whose start time 2020-01-01T00:00:00Z has passed\n")
	require.Contains(t, res.stdout, "  job rerun/once-now: a one-time job without a start time\n")
	for _, job := range []string{"once-past", "once-now", "hourly"} {
		require.Eventually(t, func() bool { return called("/rerun/"+job) == 1 }, 30*time.Second, 50*time.Millisecond,
			"--run-past runs the one-time jobs, and hourly at once: %s", job)
	}
	require.Equal(t, "disabled", state("paused"))
	// The rerun collection's jobs ran (above) as long as the cut
	// collection's had to.
	for _, job := range []string{"once-past", "once-now", "paused"} {
		require.Zero(t, called("/cut/"+job), "the jobs that ran where they came from, or that the files disable, never run: %s", job)
	}
}

// TestAnExportOfFinishedJobsImportsBack: a job that completed and one that
// faulted are exported (completed as completed, faulted as disabled) and
// the export imports back where it came from unchanged, where importing
// an export failed for every faulted job; into a new collection, neither
// runs.
func TestAnExportOfFinishedJobsImportsBack(t *testing.T) {
	st := startRecur(t)
	var mu sync.Mutex
	calls := map[string]int{}
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls[r.URL.Path]++
		mu.Unlock()
		if r.URL.Path == "/fails" {
			w.WriteHeader(http.StatusBadRequest)
		}
	}))
	t.Cleanup(target.Close)
	at := []string{"--server", st.API.URL, "--subscription", "sub1", "--resource-group", "rg1"}
	base := "/subscriptions/sub1/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/"
	apiPut(t, st, base+"done", importCollection(10))
	once := func(path string) map[string]any {
		job := importJob(target.URL+path, nil)
		job["properties"].(map[string]any)["action"].(map[string]any)["retryPolicy"] = map[string]any{"retryType": "None"}
		return job
	}
	apiPut(t, st, base+"done/jobs/succeeds", once("/succeeds"))
	apiPut(t, st, base+"done/jobs/fails", once("/fails"))
	for job, want := range map[string]string{"succeeds": "completed", "fails": "faulted"} {
		eventually(t, func(r cliResult) bool { return r.code == 0 && strings.Contains(r.stdout, `"state": "`+want+`"`) },
			"", append([]string{"jobs", "get", job, "--collection", "done", "-o", "json"}, at...)...)
	}

	exported := filepath.Join(t.TempDir(), "exported.json")
	res := recurCLI(t, "", append([]string{"export", "--collection", "done", "-o", exported}, at...)...)
	require.Equal(t, 0, res.code, "%s", res)
	data, err := os.ReadFile(exported)
	require.NoError(t, err)
	require.Contains(t, string(data), `"state": "Completed"`)
	require.Contains(t, string(data), `"state": "Disabled"`)

	res = recurCLI(t, "", append([]string{"import", exported, "--location", "westeurope"}, at...)...)
	require.Equal(t, 0, res.code, "%s", res)
	require.Equal(t, "0 created, 0 updated, 3 unchanged, 0 skipped, 0 failed", summaryLine(res))

	moved := strings.ReplaceAll(string(data), `"done"`, `"moved"`)
	require.NotEqual(t, string(data), moved, "the export names its collection")
	require.NoError(t, os.WriteFile(exported, []byte(moved), 0o600))
	res = recurCLI(t, "", append([]string{"import", exported, "--location", "westeurope"}, at...)...)
	require.Equal(t, 0, res.code, "%s", res)
	require.Equal(t, "3 created, 0 updated, 0 unchanged, 0 skipped, 0 failed", summaryLine(res))
	require.NotContains(t, res.stdout, "as soon as they are written", "%s", res)
	for job, want := range map[string]string{"succeeds": "completed", "fails": "disabled"} {
		got := recurCLI(t, "", append([]string{"jobs", "get", job, "--collection", "moved", "-o", "json"}, at...)...)
		require.Equal(t, want, got.json(t)["properties"].(map[string]any)["state"], "%s", got)
	}
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, map[string]int{"/succeeds": 1, "/fails": 1}, calls, "the jobs ran once, where they were defined first")
}

// TestImportMeetsTheFloor: a job that runs more often than the server's
// --min-interval fails the import's check, in a collection that exists
// and in one the import creates alike, and nothing is written; at the
// floor it passes.
func TestImportMeetsTheFloor(t *testing.T) {
	st := startRecur(t)
	base := "/subscriptions/sub1/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/"
	seconds := func(maxJobs int) map[string]any {
		c := importCollection(maxJobs)
		c["properties"].(map[string]any)["quota"].(map[string]any)["maxRecurrence"] = map[string]any{"frequency": "Second", "interval": 1}
		return c
	}
	apiPut(t, st, base+"old", seconds(5))
	every := func(s int) map[string]any {
		return map[string]any{"startTime": "2030-01-01T00:00:00Z", "recurrence": map[string]any{"frequency": "Second", "interval": s}}
	}
	withResources(t, func() []migrate.Resource {
		return []migrate.Resource{
			importResource(t, migrate.Job, "old", "fast", importJob("https://example.com/a", every(5))),
			importResource(t, migrate.Collection, "new", "", seconds(5)),
			importResource(t, migrate.Job, "new", "fast", importJob("https://example.com/b", every(5))),
			importResource(t, migrate.Job, "new", "ten", importJob("https://example.com/c", every(10))),
		}
	})
	res := recurCLI(t, "", "import", "--dry-run", "--server", st.API.URL, "--subscription", "sub1", "--resource-group", "rg1", importFile(t))
	require.Equal(t, 1, res.code, "%s", res)
	rows := byName(t, res)
	for _, name := range []string{"old/fast", "new/fast"} {
		require.Equal(t, "fail", rows[name]["RESULT"], "%s", res)
		require.Contains(t, rows[name]["DETAIL"], "at most once every 10 seconds (its operator's --min-interval)", name)
	}
	require.Equal(t, "create", rows["new/ten"]["RESULT"], "%s", res)
}
