package e2e

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/internal/browser"
)

// healthRow is a job's row as the dashboard shows it, in the page's order.
type healthRow struct {
	Job, Health, HealthText, Where string
	RunLabels, RunLateness         []string
}

const readHealth = `Array.from(document.querySelectorAll('#collections tr[data-job]')).map((tr) => ({
  Job: tr.dataset.job,
  Health: tr.dataset.health,
  HealthText: tr.querySelector('td.health').textContent,
  Where: ((tr.querySelector('.job-where') || {}).textContent || '').trim(),
  RunLabels: Array.from(tr.querySelectorAll('.timeline li.run')).map((li) => li.title),
  RunLateness: Array.from(tr.querySelectorAll('.timeline li.run')).map((li) => li.dataset.lateness || ''),
}))`

// TestDashboardShowsJobsHealth loads the dashboard against a job whose
// target fails and one that runs on schedule: the failing one comes first
// with its streak in its health cell, the other after it, healthy, its
// timeline saying how late its scheduled run started; "unhealthy only"
// lists the failing job, across the subscription, and not the other.
func TestDashboardShowsJobsHealth(t *testing.T) {
	s := newStack(t)
	d := dashboardStack{tenantAPI{base: s.api.URL}}
	ok, failing := newTargets(t)
	d.do(t, http.MethodPut, collectionPath, map[string]any{"location": "westeurope",
		"properties": map[string]any{"sku": map[string]any{"name": "Standard"}}}, http.StatusCreated)
	// a-steady sorts first by name: the page puts it second.
	steady := hourlyJob(ok.URL, time.Now().UTC().Add(3*time.Second).Truncate(time.Second))
	steady["properties"].(map[string]any)["recurrence"] = map[string]any{"frequency": "Minute", "interval": 1}
	d.do(t, http.MethodPut, collectionPath+"/jobs/a-steady", steady, http.StatusCreated)
	d.do(t, http.MethodPut, collectionPath+"/jobs/z-failing", hourlyJob(failing.URL, time.Now().UTC().Add(time.Hour)), http.StatusCreated)
	d.runAndWait(t, collectionPath+"/jobs/z-failing", 1)
	d.runAndWait(t, collectionPath+"/jobs/z-failing", 2)
	var lateness string
	require.Eventually(t, func() bool {
		rows := historyRows(t, d.do(t, http.MethodGet, collectionPath+"/jobs/a-steady/history", nil, http.StatusOK))
		if len(rows) == 0 {
			return false
		}
		lateness, _ = rows[0]["lateness"].(string)
		return lateness != ""
	}, 30*time.Second, 200*time.Millisecond, "a-steady never ran on schedule")
	bad := d.do(t, http.MethodGet, collectionPath+"/jobs/z-failing", nil, http.StatusOK)
	require.EqualValues(t, 2, path(bad, "properties", "status", "consecutiveFailures"), bad)

	ctx := openDashboard(t)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(s.api.URL+"/dashboard#subscription=sub1")))
	loads := 1
	var rows []healthRow
	read := func() {
		waitLoaded(t, ctx, loads)
		var err error
		rows, err = chromedp.Run(ctx, chromedp.Evaluate[[]healthRow](readHealth))
		require.NoError(t, err)
	}
	// The lists trail the jobs' status by a moment: refresh until they show it.
	for deadline := time.Now().Add(20 * time.Second); ; loads++ {
		if loads > 1 {
			require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.ID("refresh"))))
		}
		read()
		if len(rows) == 2 && rows[0].Health == "failing" && len(rows[1].RunLateness) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(300 * time.Millisecond)
	}
	require.Len(t, rows, 2, "%+v", rows)
	require.Equal(t, "z-failing", rows[0].Job, "the failing job first: %+v", rows)
	require.Equal(t, "failing", rows[0].Health)
	require.Contains(t, rows[0].HealthText, "✗ 2 in a row, never succeeded")
	require.Equal(t, "a-steady", rows[1].Job)
	require.Equal(t, "healthy", rows[1].Health)
	require.Contains(t, rows[1].HealthText, "✓ healthy")
	require.Contains(t, rows[1].HealthText, "last run ")
	// The timeline: the scheduled run carries its row's lateness, said in its label.
	require.Equal(t, lateness, rows[1].RunLateness[len(rows[1].RunLateness)-1], "%+v", rows[1])
	label := rows[1].RunLabels[len(rows[1].RunLabels)-1]
	require.Regexp(t, `^Completed at .* UTC, started [0-9.]+ m?s late`, label)
	browser.Screenshot(t, ctx, "dashboard-health.png")
	for _, l := range rows[0].RunLabels {
		require.NotContains(t, l, " late", "a run now has no lateness")
	}

	// Unhealthy only: across the subscription, the failing job alone.
	loads++
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.ID("unhealthy-only"))))
	read()
	require.Len(t, rows, 1, "%+v", rows)
	require.Equal(t, "z-failing", rows[0].Job)
	require.Equal(t, "in rg1 / coll1", rows[0].Where)
	require.Contains(t, rows[0].HealthText, "✗ 2 in a row")
	v := readView(t, ctx)
	require.Contains(t, v.Status, "1 unhealthy job(s) of sub1", v.Text)
	require.NotContains(t, v.Text, "a-steady")
	browser.Screenshot(t, ctx, "dashboard-unhealthy-only.png")

	// And back: every collection again.
	loads++
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.ID("unhealthy-only"))))
	read()
	require.Len(t, rows, 2, "%+v", rows)
	require.True(t, strings.HasPrefix(readView(t, ctx).Status, "1 collection(s) of sub1"), strconv.Quote(readView(t, ctx).Status))
}
