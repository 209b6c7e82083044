package e2e

import (
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// failedRun is a failed run as the dashboard lists it.
type failedRun struct {
	ID, Kind, Answer, Button string
}

// readFailures is the script that reads the failed runs the dashboard
// lists under job flaky.
const readFailures = `Array.from(document.querySelectorAll('tr[data-history-of="flaky"] details.failures tr[data-failure]')).map((tr) => ({
  ID: tr.dataset.failure, Kind: tr.children[1].textContent, Answer: tr.children[2].textContent,
  Button: (tr.querySelector('button.run-again') || {}).textContent || '',
}))`

// TestDashboardRunsAFailedRunAgain: the dashboard lists a job's failed
// run under its history with its kind and answer; Run again queues it
// (the outcome says so), its target gets the call, and the job's history
// gains the re-run's row.
func TestDashboardRunsAFailedRunAgain(t *testing.T) {
	s := newStack(t)
	d := dashboardStack{tenantAPI{base: s.api.URL}}
	target := newFixableTarget(t)
	d.do(t, http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{}}, http.StatusCreated)
	jobPath := collectionPath + "/jobs/flaky"
	d.do(t, http.MethodPut, jobPath, hourlyJob(target.url, time.Now().UTC().Add(time.Hour).Truncate(time.Second)), http.StatusCreated)
	d.runAndWait(t, jobPath, 1)
	list := d.do(t, http.MethodGet, jobPath+"/failures", nil, http.StatusOK)
	require.Len(t, failureEntries(t, list), 1)

	ctx := openDashboard(t)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(s.api.URL+"/dashboard#subscription=sub1")))
	waitLoaded(t, ctx, 1)
	failures, err := chromedp.Run(ctx, chromedp.Evaluate[[]failedRun](readFailures))
	require.NoError(t, err)
	id := failureEntries(t, list)[0]["name"].(string)[len("coll1/flaky/"):]
	require.Equal(t, []failedRun{{ID: id, Kind: "runNow", Answer: "503 Service Unavailable", Button: "Run again"}}, failures)

	target.fixed.Store(true)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`tr[data-history-of="flaky"] details.failures summary`)),
		chromedp.Click(chromedp.CSS(`tr[data-history-of="flaky"] tr[data-failure="`+id+`"] button.run-again`))))
	v := waitActed(t, ctx, 1)
	require.Equal(t, "ok", v.Jobs["flaky"].OutcomeKind, v.Jobs["flaky"].Outcome)
	require.Contains(t, v.Jobs["flaky"].Outcome, "is queued to run again")
	require.Eventually(t, func() bool { return len(target.got()) == 2 }, 30*time.Second, 100*time.Millisecond, "the re-run reaches the target")
	require.Eventually(t, func() bool {
		rows := historyRows(t, d.do(t, http.MethodGet, jobPath+"/history", nil, http.StatusOK))
		return len(rows) == 2 && rows[0]["rerunOf"] == id
	}, 30*time.Second, 200*time.Millisecond, "the re-run's row")
}
