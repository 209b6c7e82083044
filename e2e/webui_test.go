package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/recurhq/recur/internal/browser"
	"github.com/recurhq/recur/internal/recurproc"
)

// TestWebUIFiltersFailedRuns runs the real `recur dev` (the embedded
// Temporal server, its Web UI, the worker and the API), makes a job whose
// runs fail and one whose runs succeed, and opens the Web UI's workflow
// list in headless Chromium with the visibility query the README gives:
// it lists the failed job's runs and nothing of the other job. A run's page
// shows its input, encrypted at rest, decoded through recur's /codec.
func TestWebUIFiltersFailedRuns(t *testing.T) {
	dir := t.TempDir()
	bin, err := recurproc.Build(dir)
	require.NoError(t, err)
	p, err := recurproc.Start(bin, filepath.Join(dir, "data"), filepath.Join(dir, "recur.log"), false)
	require.NoError(t, err)
	t.Cleanup(func() {
		if err := p.Stop(); err != nil {
			t.Error(err)
		}
		p.Kill()
	})

	ok, failing := newTargets(t)
	api := recurproc.NewClient(p.API)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	coll := "/subscriptions/ui-sub/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/ui"
	require.NoError(t, api.Do(ctx, http.MethodPut, coll, map[string]any{"properties": map[string]any{}}, nil, http.StatusCreated))
	start := time.Now().UTC().Add(time.Hour).Truncate(time.Second)
	for name, target := range map[string]*httptest.Server{"broken-feed": failing, "healthy-feed": ok} {
		require.NoError(t, api.Do(ctx, http.MethodPut, coll+"/jobs/"+name, hourlyJob(target.URL, start), nil, http.StatusCreated))
		// One run at a time: a run due while another runs is postponed.
		for i := range 2 {
			require.NoError(t, api.Do(ctx, http.MethodPost, coll+"/jobs/"+name+"/run", nil, nil, http.StatusOK))
			require.Eventually(t, func() bool {
				var h struct{ Value []any }
				err := api.Do(ctx, http.MethodGet, coll+"/jobs/"+name+"/history", nil, &h, http.StatusOK)
				return err == nil && len(h.Value) > i
			}, 30*time.Second, 200*time.Millisecond, "run %d of %s", i+1, name)
		}
	}

	// The run workflows, as Temporal lists them.
	tc, err := client.Dial(client.Options{HostPort: p.Temporal, Namespace: "default"})
	require.NoError(t, err)
	defer tc.Close()
	runs := func(job, status string) []string {
		resp, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default",
			Query: `RecurKind="run" AND RecurJob="` + job + `" AND RecurStatus="` + status + `"`})
		require.NoError(t, err)
		var ids []string
		for _, e := range resp.Executions {
			ids = append(ids, e.Execution.WorkflowId)
		}
		slices.Sort(ids)
		return ids
	}
	var failed, completed []string
	require.Eventually(t, func() bool {
		failed, completed = runs("broken-feed", "Failed"), runs("healthy-feed", "Completed")
		return len(failed) == 2 && len(completed) == 2
	}, 60*time.Second, 250*time.Millisecond, "runs: failed %v, completed %v", failed, completed)
	require.Empty(t, runs("healthy-feed", "Failed"))

	query := `RecurKind="run" AND RecurJob="broken-feed" AND RecurStatus="Failed"`
	b, cancelB := context.WithTimeout(browser.New(t), 60*time.Second)
	defer cancelB()
	// Spaces as %20, as the README spells the link.
	link := p.UI + "/namespaces/default/workflows?query=" + strings.ReplaceAll(url.QueryEscape(query), "+", "%20")
	require.NoError(t, chromedp.Do(b, chromedp.Navigate(link)))
	// The list is rendered by script once the UI's server has answered.
	ids, err := chromedp.Run(b, chromedp.Poll[[]string](`(() => {
	  const ids = Array.from(document.querySelectorAll('a[href*="/workflows/"]'))
	    .map((a) => a.textContent.trim()).filter((s) => s.startsWith('job:'));
	  return ids.length >= 2 ? ids : null;
	})()`, chromedp.WithPollingTimeout(40*time.Second), chromedp.WithPollingInterval(250*time.Millisecond)))
	if err != nil {
		text, _ := chromedp.Run(b, chromedp.Evaluate[string](`document.body.innerText`))
		browser.Screenshot(t, b, "webui-failed.png")
		t.Fatalf("the Web UI never listed the runs: %v\n%s", err, browser.Shorten(text, 3000))
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	require.Equal(t, failed, ids, "the Web UI lists exactly the failed job's failed runs")
	text, err := chromedp.Run(b, chromedp.Evaluate[string](`document.body.innerText`))
	require.NoError(t, err)
	require.NotContains(t, text, "healthy-feed", "nothing of the job whose runs succeed")
	for _, id := range failed {
		require.True(t, strings.HasPrefix(id, "job:ui-sub/rg/ui/broken-feed@"), id)
	}
	browser.Screenshot(t, b, "webui-failed-runs.png")

	// A run's input is encrypted at rest (recur dev has a key); the UI
	// shows it decoded, through recur's /codec endpoint.
	hist := tc.GetWorkflowHistory(ctx, failed[0], "", false, 0)
	first, err := hist.Next()
	require.NoError(t, err)
	input := first.GetWorkflowExecutionStartedEventAttributes().GetInput().GetPayloads()
	require.Len(t, input, 1)
	require.Equal(t, "binary/encrypted", string(input[0].GetMetadata()["encoding"]))
	require.NotContains(t, string(input[0].GetData()), failing.URL)
	require.NoError(t, chromedp.Do(b, chromedp.Click(chromedp.CSS(`a[href*="/workflows/job"]`))))
	_, err = chromedp.Run(b, chromedp.Poll[chromedp.Void](
		`document.body.innerText.includes('"uri": "`+failing.URL+`"')`, chromedp.WithPollingTimeout(30*time.Second)))
	if err != nil {
		text, _ := chromedp.Run(b, chromedp.Evaluate[string](`document.body.innerText`))
		t.Fatalf("the run's page never showed its decoded input: %v\n%s", err, browser.Shorten(text, 3000))
	}
	browser.Screenshot(t, b, "webui-run-detail.png")
}
