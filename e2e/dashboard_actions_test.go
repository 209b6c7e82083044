package e2e

import (
	"context"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/internal/browser"
)

// shownAt is how the dashboard says an instant: in zone beside UTC,
// "2036-11-27 02:00 Europe/Berlin (01:00 UTC)", with the UTC date when it
// is another day and seconds when there are any; "2036-11-27 01:00 UTC"
// without a zone.
func shownAt(t *testing.T, at time.Time, zone string) string {
	t.Helper()
	u := at.UTC()
	clock := "15:04"
	if u.Second() != 0 {
		clock = "15:04:05"
	}
	if zone == "" {
		return u.Format(time.DateOnly+" "+clock) + " UTC"
	}
	loc, err := time.LoadLocation(zone)
	require.NoError(t, err)
	w := at.In(loc)
	utc := u.Format(clock)
	if w.Format(time.DateOnly) != u.Format(time.DateOnly) {
		utc = u.Format(time.DateOnly + " " + clock)
	}
	return w.Format(time.DateOnly+" "+clock) + " " + zone + " (" + utc + " UTC)"
}

// zonedJob is a job calling uri on recurrence, from start on.
func zonedJob(uri string, recurrence map[string]any, start time.Time) map[string]any {
	job := hourlyJob(uri, start)
	job["properties"].(map[string]any)["recurrence"] = recurrence
	return job
}

// cronJob is a job calling uri on a cron schedule in zone (none when
// empty), from start on.
func cronJob(uri, cron, zone string, start time.Time) map[string]any {
	recurrence := map[string]any{"cron": cron}
	if zone != "" {
		recurrence["timeZone"] = zone
	}
	return zonedJob(uri, recurrence, start)
}

// click clicks the button of class button in job's row, then the
// confirmation it asks for, having typed reason into it when not empty.
func click(t *testing.T, ctx context.Context, job, button, reason string) {
	t.Helper()
	row := `tr[data-job="` + job + `"] `
	steps := []chromedp.Action[chromedp.Void]{chromedp.Click(chromedp.CSS(row + `.actions button.` + button))}
	if reason != "" {
		steps = append(steps, chromedp.SendKeys(chromedp.CSS(row+`form.confirm input.reason`), reason))
	}
	if button != "enable" {
		steps = append(steps, chromedp.Click(chromedp.CSS(row+`form.confirm .confirm-action`)))
	}
	require.NoError(t, chromedp.Do(ctx, steps...), "%s of %s", button, job)
}

// waitActed waits until the page has ended n actions, and reads it.
func waitActed(t *testing.T, ctx context.Context, n int) dashboardView {
	t.Helper()
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](
		`Number(document.body.dataset.acted || 0) >= `+strconv.Itoa(n), chromedp.WithPollingTimeout(90*time.Second)))
	require.NoError(t, err, "action %d never ended", n)
	return readView(t, ctx)
}

// TestDashboardShowsTimesInTheJobsOwnZone: a job's next run, last run,
// timeline and history show in its recurrence's time zone beside UTC, an
// IANA name as given and a Windows name as the API resolves it; a job
// without a zone shows UTC alone. The jobs start in 2036, so their next
// runs are fixed, in winter and in summer.
func TestDashboardShowsTimesInTheJobsOwnZone(t *testing.T) {
	s := newStack(t)
	d := dashboardStack{tenantAPI{base: s.api.URL}}
	ok, _ := newTargets(t)
	d.do(t, http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{}}, http.StatusCreated)
	winter := time.Date(2036, 11, 27, 0, 0, 0, 0, time.UTC)
	summer := time.Date(2036, 7, 1, 0, 0, 0, 0, time.UTC)
	night := zonedJob(ok.URL, map[string]any{"frequency": "Day", "timeZone": "Europe/Berlin",
		"schedule": map[string]any{"hours": []int{0}, "minutes": []int{30}}}, winter)
	for name, job := range map[string]map[string]any{
		"berlin":  cronJob(ok.URL, "0 2 * * *", "Europe/Berlin", winter),
		"night":   night,
		"windows": cronJob(ok.URL, "30 2 * * *", "W. Europe Standard Time", summer),
		"utc":     cronJob(ok.URL, "0 1 * * *", "", winter),
		"utc-set": cronJob(ok.URL, "0 1 * * *", "UTC", winter),
	} {
		d.do(t, http.MethodPut, collectionPath+"/jobs/"+name, job, http.StatusCreated)
	}
	// The API's next runs, which the page shows.
	for name, next := range map[string]string{
		"berlin": "2036-11-27T01:00:00Z", "night": "2036-11-27T23:30:00Z", "windows": "2036-07-01T00:30:00Z",
		"utc": "2036-11-27T01:00:00Z", "utc-set": "2036-11-27T01:00:00Z",
	} {
		job := d.do(t, http.MethodGet, collectionPath+"/jobs/"+name, nil, http.StatusOK)
		require.Equal(t, next, path(job, "properties", "status", "nextExecutionTime"), name)
	}

	ctx := openDashboard(t)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(s.api.URL+"/dashboard#subscription=sub1")))
	v := waitLoaded(t, ctx, 1)
	require.Len(t, v.Jobs, 5, v.Text)
	for name, want := range map[string]string{
		"berlin":  "2036-11-27 02:00 Europe/Berlin (01:00 UTC)",
		"night":   "2036-11-28 00:30 Europe/Berlin (2036-11-27 23:30 UTC)",
		"windows": "2036-07-01 02:30 Europe/Berlin (00:30 UTC)",
		"utc":     "2036-11-27 01:00 UTC",
		"utc-set": "2036-11-27 01:00 UTC",
	} {
		require.Equal(t, want, v.Jobs[name].NextText, name)
		require.Regexp(t, `^`+regexp.QuoteMeta(want)+` in \d+ d$`, v.Jobs[name].Next, name)
	}

	// Run now: the run's history row, its timeline mark, its last run and
	// the action's outcome all say their times in Berlin beside UTC.
	click(t, ctx, "berlin", "run-now", "")
	v = waitActed(t, ctx, 1)
	h := d.do(t, http.MethodGet, collectionPath+"/jobs/berlin/history", nil, http.StatusOK)
	rows, _ := h["value"].([]any)
	require.Len(t, rows, 1)
	row := rows[0].(map[string]any)
	planned, err := time.Parse(time.RFC3339Nano, path(row, "properties", "expectedExecutionTime").(string))
	require.NoError(t, err)
	started, err := time.Parse(time.RFC3339Nano, path(row, "properties", "startTime").(string))
	require.NoError(t, err)
	job := d.do(t, http.MethodGet, collectionPath+"/jobs/berlin", nil, http.StatusOK)
	last, err := time.Parse(time.RFC3339Nano, path(job, "properties", "status", "lastExecutionTime").(string))
	require.NoError(t, err)
	berlin := v.Jobs["berlin"]
	require.Equal(t, []string{shownAt(t, planned, "Europe/Berlin")}, berlin.Planned)
	require.Equal(t, []string{"run run-completed"}, berlin.Runs)
	require.Len(t, berlin.RunLabels, 1)
	require.True(t, strings.HasPrefix(berlin.RunLabels[0], "Completed at "+shownAt(t, started, "Europe/Berlin")+": 200 OK "), berlin.RunLabels)
	require.Equal(t, shownAt(t, last, "Europe/Berlin"), berlin.LastText)
	require.Equal(t, "Ran: Completed at "+shownAt(t, started, "Europe/Berlin")+".", berlin.Outcome)
	require.Equal(t, "ok", berlin.OutcomeKind)
	require.Equal(t, "1 / 0 / 0", berlin.Counts)
	require.Equal(t, "2036-11-27 02:00 Europe/Berlin (01:00 UTC)", berlin.NextText, "run now leaves the schedule as it is")

	// The preview form resolves a Windows name through the API too.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("pv-cron"), "0 2 * * *"),
		chromedp.SendKeys(chromedp.ID("pv-start"), "2036-11-27T00:00:00Z"),
		chromedp.SendKeys(chromedp.ID("pv-zone"), "W. Europe Standard Time"),
		chromedp.SetValue(chromedp.ID("pv-count"), "2"),
		chromedp.Click(chromedp.CSS(`#preview-form button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#preview-result[data-count] li`))))
	times, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
		`Array.from(document.querySelectorAll('#preview-result time')).map((t) => t.textContent)`))
	require.NoError(t, err)
	require.Equal(t, []string{"2036-11-27 02:00 Europe/Berlin (01:00 UTC)", "2036-11-28 02:00 Europe/Berlin (01:00 UTC)"}, times)
	browser.Screenshot(t, ctx, "dashboard-zones.png")
}

// TestDashboardRunsDisablesAndEnablesJobs: the page acts on a job with
// the token it holds, and each action shows its outcome and the job as the
// API has it afterwards: run now adds a history row, disable writes the
// reason typed, enable clears it; a job changed through the API since the
// page read it is not overwritten (412, and the row shows the change); a
// job deleted meanwhile says so; a token the API refuses gets its 401, as
// text.
func TestDashboardRunsDisablesAndEnablesJobs(t *testing.T) {
	const token = "dashboard-actions-0123456789"
	st, d := authedDashboard(t, token, "sub-a")
	ok, _ := newTargets(t)
	coll := "/subscriptions/sub-a/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/ops"
	d.do(t, http.MethodPut, coll, map[string]any{"properties": map[string]any{}}, http.StatusCreated)
	start := time.Now().UTC().Add(time.Hour).Truncate(time.Second)
	for _, name := range []string{"act", "other", "doomed"} {
		d.do(t, http.MethodPut, coll+"/jobs/"+name, hourlyJob(ok.URL, start), http.StatusCreated)
	}
	get := func(name string) map[string]any {
		return d.do(t, http.MethodGet, coll+"/jobs/"+name, nil, http.StatusOK)
	}

	ctx := openDashboard(t)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(st.API.URL+"/dashboard#subscription=sub-a"),
		chromedp.WaitVisible(chromedp.CSS(`#auth.needed`)),
		chromedp.SendKeys(chromedp.ID("token"), token),
		chromedp.Click(chromedp.CSS(`#token-form button[type=submit]`))))
	v := waitLoaded(t, ctx, 1)
	require.Equal(t, []string{"Run now", "Disable…"}, v.Jobs["act"].Buttons)
	require.Empty(t, v.Jobs["act"].Runs)

	// Run now asks first; Cancel runs nothing and puts the buttons back.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`tr[data-job="act"] button.run-now`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-job="act"] form.confirm`)),
		chromedp.WaitNotVisible(chromedp.CSS(`tr[data-job="act"] .buttons`)),
		chromedp.Click(chromedp.CSS(`tr[data-job="act"] form.confirm button.cancel`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-job="act"] button.run-now`))))
	require.Zero(t, readView(t, ctx).Jobs["act"].Outcome)

	click(t, ctx, "act", "run-now", "")
	v = waitActed(t, ctx, 1)
	act := v.Jobs["act"]
	require.Equal(t, "ok", act.OutcomeKind, act.Outcome)
	require.Regexp(t, `^Ran: Completed at \d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)? UTC\.$`, act.Outcome)
	require.Equal(t, []string{"run run-completed"}, act.Runs, "the run's history row is there")
	require.Len(t, act.Messages, 1)
	require.True(t, strings.HasPrefix(act.Messages[0], "200 OK ") && strings.HasSuffix(act.Messages[0], ": fine"), act.Messages)
	require.Equal(t, "1 / 0 / 0", act.Counts)
	require.EqualValues(t, 1, path(get("act"), "properties", "status", "executionCount"))

	// Disable with a reason; the API has it too.
	click(t, ctx, "act", "disable", "target migrating until Monday")
	v = waitActed(t, ctx, 2)
	act = v.Jobs["act"]
	require.Equal(t, "Disabled; its state is disabled.", act.Outcome)
	require.Equal(t, "disabled", act.State)
	require.Equal(t, "target migrating until Monday", act.Reason)
	require.Equal(t, []string{"Run now", "Enable"}, act.Buttons)
	require.Equal(t, "disabled", path(get("act"), "properties", "state"))
	require.Equal(t, "target migrating until Monday", path(get("act"), "properties", "stateReason"))

	// Enable clears the reason.
	click(t, ctx, "act", "enable", "")
	v = waitActed(t, ctx, 3)
	act = v.Jobs["act"]
	require.Equal(t, "Enabled; its state is enabled.", act.Outcome)
	require.Equal(t, "enabled", act.State)
	require.Empty(t, act.Reason)
	require.Equal(t, "enabled", path(get("act"), "properties", "state"))
	require.Nil(t, path(get("act"), "properties", "stateReason"))

	// Someone disables "other" through the API after the page read it:
	// the page's Disable names the revision it showed, gets 412, writes
	// nothing and shows the job as it is now.
	d.do(t, http.MethodPatch, coll+"/jobs/other", map[string]any{"properties": map[string]any{
		"state": "Disabled", "stateReason": "disabled by someone else"}}, http.StatusOK)
	require.Equal(t, "enabled", readView(t, ctx).Jobs["other"].State, "the page still shows what it read")
	click(t, ctx, "other", "disable", "mine")
	v = waitActed(t, ctx, 4)
	other := v.Jobs["other"]
	require.Equal(t, "error", other.OutcomeKind)
	require.Contains(t, other.Outcome, "The job changed since this page read it, and nothing was written")
	require.Contains(t, other.Outcome, "Error 412 PreconditionFailed: ")
	require.Equal(t, "disabled", other.State)
	require.Equal(t, "disabled by someone else", other.Reason)
	require.Equal(t, "disabled by someone else", path(get("other"), "properties", "stateReason"), "not overwritten")
	// The row now holds the job's revision: enabling it works.
	click(t, ctx, "other", "enable", "")
	require.Equal(t, "Enabled; its state is enabled.", waitActed(t, ctx, 5).Jobs["other"].Outcome)

	// A job deleted meanwhile.
	d.do(t, http.MethodDelete, coll+"/jobs/doomed", nil, http.StatusOK)
	click(t, ctx, "doomed", "run-now", "")
	doomed := waitActed(t, ctx, 6).Jobs["doomed"]
	require.Equal(t, "error", doomed.OutcomeKind)
	require.Contains(t, doomed.Outcome, "This job no longer exists. Error 404 ")
	require.Empty(t, doomed.Buttons, "nothing more to do to it")

	// A token the API no longer accepts (an expired JWT, say): the 401 is
	// shown in the row, as the API put it, and the page asks for a token.
	require.NoError(t, chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](
		`sessionStorage.setItem('recur.dashboard.token', 'not-the-token-0123456789')`)))
	click(t, ctx, "act", "run-now", "")
	v = waitActed(t, ctx, 7)
	act = v.Jobs["act"]
	require.Equal(t, "error", act.OutcomeKind)
	require.Regexp(t, `^Error 401 AuthenticationFailed: \S`, act.Outcome)
	require.True(t, v.AuthNeeded)
	require.Equal(t, []string{"Run now", "Disable…"}, act.Buttons, "the job's buttons may be tried again")
	require.EqualValues(t, 1, path(get("act"), "properties", "status", "executionCount"), "nothing ran")
	require.Zero(t, v.Elements)
	require.Nil(t, v.Pwned)
	browser.Screenshot(t, ctx, "dashboard-actions.png")
}
