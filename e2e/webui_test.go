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
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/recurhq/recur/internal/browser"
	"github.com/recurhq/recur/internal/recurproc"
	"github.com/recurhq/recur/jobs"
)

// TestWebUIFiltersFailingJobs runs the real `recur dev` (the embedded
// Temporal server, its Web UI, the worker and the API), makes a job whose
// runs fail and one whose runs succeed, and opens the Web UI's workflow
// list in headless Chromium with the visibility query docs/operations.md
// gives: it lists the failing job and nothing of the other. The job's page shows
// its occurrences, encrypted at rest, decoded through recur's /codec.
func TestWebUIFiltersFailingJobs(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: it needs Chromium")
	}
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

	// The jobs, as Temporal lists them by their last outcome.
	tc, err := client.Dial(client.Options{HostPort: p.Temporal, Namespace: "default"})
	require.NoError(t, err)
	defer tc.Close()
	jobsWith := func(status string) []string {
		resp, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default",
			Query: `RecurKind="job" AND RecurStatus="` + status + `"`})
		require.NoError(t, err)
		var ids []string
		for _, e := range resp.Executions {
			ids = append(ids, e.Execution.WorkflowId)
		}
		return ids
	}
	failingJob, healthyJob := "job:ui-sub/rg/ui/broken-feed", "job:ui-sub/rg/ui/healthy-feed"
	require.Eventually(t, func() bool {
		return slices.Equal(jobsWith("Failed"), []string{failingJob}) && slices.Equal(jobsWith("Completed"), []string{healthyJob})
	}, 60*time.Second, 250*time.Millisecond, "failed %v, completed %v", jobsWith("Failed"), jobsWith("Completed"))

	query := `RecurKind="job" AND RecurStatus="Failed"`
	b, cancelB := context.WithTimeout(browser.New(t), 60*time.Second)
	defer cancelB()
	// Spaces as %20, as docs/operations.md spells the link.
	link := p.UI + "/namespaces/default/workflows?query=" + strings.ReplaceAll(url.QueryEscape(query), "+", "%20")
	require.NoError(t, chromedp.Do(b, chromedp.Navigate(link)))
	// The list is rendered by script once the UI's server has answered.
	ids, err := chromedp.Run(b, chromedp.Poll[[]string](`(() => {
	  const ids = Array.from(document.querySelectorAll('a[href*="/workflows/"]'))
	    .map((a) => a.textContent.trim()).filter((s) => s.startsWith('job:'));
	  return ids.length >= 1 ? ids : null;
	})()`, chromedp.WithPollingTimeout(40*time.Second), chromedp.WithPollingInterval(250*time.Millisecond)))
	if err != nil {
		text, _ := chromedp.Run(b, chromedp.Evaluate[string](`document.body.innerText`))
		browser.Screenshot(t, b, "webui-failed.png")
		t.Fatalf("the Web UI never listed the failing job: %v\n%s", err, browser.Shorten(text, 3000))
	}
	require.Equal(t, []string{failingJob}, slices.Compact(ids), "the Web UI lists exactly the failing job")
	text, err := chromedp.Run(b, chromedp.Evaluate[string](`document.body.innerText`))
	require.NoError(t, err)
	require.NotContains(t, text, "healthy-feed", "nothing of the job whose runs succeed")
	browser.Screenshot(t, b, "webui-failing-jobs.png")

	// An occurrence's rows are encrypted at rest (recur dev has a key);
	// the UI shows them decoded, through recur's /codec endpoint.
	rows := occurrenceRows(t, ctx, tc, failingJob)
	require.Equal(t, "binary/encrypted", string(rows.GetMetadata()["encoding"]))
	require.NotContains(t, string(rows.GetData()), "Internal Server Error")
	// The job's event history: each occurrence's first attempt is a local
	// activity (an activity when its target answers past the budget).
	d, err := tc.DescribeWorkflowExecution(ctx, failingJob, "")
	require.NoError(t, err)
	history := p.UI + "/namespaces/default/workflows/" + url.PathEscape(failingJob) + "/" +
		d.GetWorkflowExecutionInfo().GetExecution().GetRunId() + "/history"
	require.NoError(t, chromedp.Do(b, chromedp.Navigate(history)))
	_, err = chromedp.Run(b, chromedp.Poll[chromedp.Void](`/Activity ?Task ?(Completed|Failed)|Local ?Activity/.test(document.body.innerText)`,
		chromedp.WithPollingTimeout(30*time.Second)))
	if err != nil {
		text, _ := chromedp.Run(b, chromedp.Evaluate[string](`document.body.innerText`))
		t.Fatalf("the job's history lists no occurrence: %v\n%s", err, browser.Shorten(text, 3000))
	}
	// Its memo, decoded, holds the rows of its last occurrence.
	opened, err := chromedp.Run(b, chromedp.Evaluate[bool](`(() => {
	  const tab = Array.from(document.querySelectorAll('a, button, [role="tab"]'))
	    .find((e) => e.textContent.trim() === 'Memo');
	  if (!tab) return false;
	  tab.click();
	  return true;
	})()`))
	require.NoError(t, err)
	require.True(t, opened, "the job's Memo tab")
	_, err = chromedp.Run(b, chromedp.Poll[chromedp.Void](
		`document.body.innerText.includes('500 Internal Server Error')`, chromedp.WithPollingTimeout(30*time.Second)))
	if err != nil {
		text, _ := chromedp.Run(b, chromedp.Evaluate[string](`document.body.innerText`))
		browser.Screenshot(t, b, "webui-job-detail.png")
		t.Fatalf("the job's history never showed an occurrence's outcome: %v\n%s", err, browser.Shorten(text, 6000))
	}
	browser.Screenshot(t, b, "webui-job-detail.png")
}

// occurrenceRows returns the payload of the first history rows the job's
// workflow wrote (jobs.MemoRows), as Temporal stores it.
func occurrenceRows(t *testing.T, ctx context.Context, tc client.Client, workflowID string) *commonpb.Payload {
	t.Helper()
	hist := tc.GetWorkflowHistory(ctx, workflowID, "", false, 0)
	for hist.HasNext() {
		e, err := hist.Next()
		require.NoError(t, err)
		if p, ok := e.GetWorkflowPropertiesModifiedEventAttributes().GetUpsertedMemo().GetFields()[jobs.MemoRows]; ok {
			return p
		}
	}
	t.Fatalf("%s wrote no history rows", workflowID)
	return nil
}
