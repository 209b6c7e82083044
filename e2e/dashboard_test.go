package e2e

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/api"
	"github.com/recurhq/recur/internal/browser"
	"github.com/recurhq/recur/internal/recurtest"
)

// markup is what hostile data looks like: were it ever put into the page as
// HTML, a script would run and set window.pwned.
const markup = `<script>window.pwned=1</script><img src=x onerror="window.pwned=2"><b>bold</b>`

// dashboardView is what the dashboard shows, read from its DOM.
type dashboardView struct {
	Collections []string
	Meta        []string
	Jobs        map[string]jobView
	Status      string
	Error       string
	AuthNeeded  bool
	Elements    int // script, img and b elements among the collections
	Pwned       any
	Text        string // the whole page's text
}

type jobView struct {
	State, Reason, Next, NextTime, NextText, Last, LastText, Counts string
	Runs                                                            []string // the timeline's classes, oldest first
	RunLabels                                                       []string
	Messages                                                        []string // the history's messages
	Planned                                                         []string // the history's planned times, as shown
	Buttons                                                         []string // the actions offered now
	Outcome, OutcomeKind                                            string   // what the last action did
}

// readDashboard is the script that reads dashboardView from the page.
const readDashboard = `(() => {
  const q = (s, n = document) => Array.from(n.querySelectorAll(s));
  const jobs = {};
  for (const tr of q('#collections tr[data-job]')) {
    const cells = tr.children;
    jobs[tr.dataset.job] = {
      State: cells[1].querySelector('.state').textContent.trim(),
      Reason: ((cells[1].querySelector('.state-reason') || {}).textContent || '').trim(),
      Next: cells[2].textContent.trim(),
      NextTime: (cells[2].querySelector('time') || {}).dateTime || '',
      NextText: (cells[2].querySelector('time') || {}).textContent || '',
      Last: cells[3].textContent.trim(),
      LastText: (cells[3].querySelector('time') || {}).textContent || '',
      Counts: cells[4].textContent.trim(),
      Runs: q('.timeline li.run', tr).map((li) => li.className),
      RunLabels: q('.timeline li.run', tr).map((li) => li.title),
      Messages: q('tr[data-history-of="' + tr.dataset.job + '"] table.rows td.message').map((td) => td.textContent),
      Planned: q('tr[data-history-of="' + tr.dataset.job + '"] table.rows time').map((t) => t.textContent),
      Buttons: q('.actions .buttons button:not([disabled]):not([aria-disabled=true])', tr).map((b) => b.textContent),
      Outcome: (tr.querySelector('.outcome') || {}).textContent || '',
      OutcomeKind: (tr.querySelector('.outcome') || { dataset: {} }).dataset.kind || '',
    };
  }
  return {
    Collections: q('#collections [data-collection] .name').map((n) => n.textContent),
    Meta: q('#collections .meta').map((n) => n.textContent),
    Jobs: jobs,
    Status: document.getElementById('status').textContent,
    Error: document.getElementById('error').textContent,
    AuthNeeded: document.getElementById('auth').classList.contains('needed'),
    Elements: q('#collections script, #collections img, #collections b, #error *:not(strong)').length,
    Pwned: window.pwned ?? null,
    Text: document.body.innerText,
  };
})()`

// dashboardStack is the API of a stack, with an optional token.
type dashboardStack struct{ tenantAPI }

// do is tenantAPI.do that wants the status want and decodes the answer.
func (d dashboardStack) do(t *testing.T, method, path string, body any, want int) map[string]any {
	t.Helper()
	a := d.tenantAPI.do(t, method, path, body)
	require.Equal(t, want, a.status, "%s %s: %s", method, path, a.body)
	if len(a.body) == 0 {
		return nil
	}
	return a.json(t)
}

// hourlyJob is a job due every hour from an hour from now, calling uri
// once per run.
func hourlyJob(uri string, start time.Time) map[string]any {
	return map[string]any{"properties": map[string]any{
		"startTime": start.Format(time.RFC3339),
		"action": map[string]any{"type": "Http", "request": map[string]any{"uri": uri, "method": "GET"},
			"retryPolicy": map[string]any{"retryType": "None"}},
		"recurrence": map[string]any{"frequency": "Hour", "interval": 1},
	}}
}

// runAndWait runs the job now and waits until its history has rows rows.
func (d dashboardStack) runAndWait(t *testing.T, jobPath string, rows int) {
	t.Helper()
	d.do(t, http.MethodPost, jobPath+"/run", nil, http.StatusOK)
	require.Eventually(t, func() bool {
		h := d.do(t, http.MethodGet, jobPath+"/history", nil, http.StatusOK)
		v, _ := h["value"].([]any)
		return len(v) >= rows
	}, 30*time.Second, 200*time.Millisecond, "%s never had %d history rows", jobPath, rows)
}

func newTargets(t *testing.T) (ok, failing *httptest.Server) {
	ok = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "fine")
	}))
	t.Cleanup(ok.Close)
	failing = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, markup)
	}))
	t.Cleanup(failing.Close)
	return ok, failing
}

// openDashboard starts a browser for the test, with every step bounded.
func openDashboard(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(browser.New(t), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// waitLoaded waits until the dashboard has rendered the collections n
// times, and reads it.
func waitLoaded(t *testing.T, ctx context.Context, n int) dashboardView {
	t.Helper()
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](
		`Number(document.body.dataset.loaded || 0) >= `+strconv.Itoa(n), chromedp.WithPollingTimeout(30*time.Second)))
	require.NoError(t, err, "the dashboard never loaded")
	return readView(t, ctx)
}

func readView(t *testing.T, ctx context.Context) dashboardView {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[dashboardView](readDashboard))
	require.NoError(t, err)
	return v
}

// TestDashboardShowsJobsRunsAndPreview loads the dashboard in headless
// Chromium against a real stack: a collection with a job whose runs
// succeed, one whose runs fail and a disabled one; it checks what the page
// shows of each against the API, then previews a recurrence in the form.
func TestDashboardShowsJobsRunsAndPreview(t *testing.T) {
	s := newStack(t)
	d := dashboardStack{tenantAPI{base: s.api.URL}}
	ok, failing := newTargets(t)
	d.do(t, http.MethodPut, collectionPath, map[string]any{"location": "westeurope",
		"properties": map[string]any{"sku": map[string]any{"name": "Standard"}}}, http.StatusCreated)
	start := time.Now().UTC().Add(time.Hour).Truncate(time.Second)
	d.do(t, http.MethodPut, collectionPath+"/jobs/ok-job", hourlyJob(ok.URL, start), http.StatusCreated)
	d.do(t, http.MethodPut, collectionPath+"/jobs/failing-job", hourlyJob(failing.URL, start), http.StatusCreated)
	paused := hourlyJob(ok.URL, start)
	paused["properties"].(map[string]any)["state"] = "Disabled"
	paused["properties"].(map[string]any)["stateReason"] = "paused for the <b>migration</b>"
	d.do(t, http.MethodPut, collectionPath+"/jobs/paused", paused, http.StatusCreated)
	d.runAndWait(t, collectionPath+"/jobs/ok-job", 1)
	d.runAndWait(t, collectionPath+"/jobs/ok-job", 2)
	d.runAndWait(t, collectionPath+"/jobs/failing-job", 1)
	okJob := d.do(t, http.MethodGet, collectionPath+"/jobs/ok-job", nil, http.StatusOK)

	ctx := openDashboard(t)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(s.api.URL+"/"),
		chromedp.WaitVisible(chromedp.ID("subscription")),
		chromedp.SendKeys(chromedp.ID("subscription"), "sub1"),
		chromedp.Click(chromedp.CSS(`#scope-form button[type=submit]`))))
	v := waitLoaded(t, ctx, 1)

	require.Equal(t, []string{"coll1"}, v.Collections, v.Text)
	require.Equal(t, []string{"resource group rg1 · location westeurope · sku Standard · at most 50 jobs"}, v.Meta)
	require.Len(t, v.Jobs, 3, v.Text)
	good, bad, off := v.Jobs["ok-job"], v.Jobs["failing-job"], v.Jobs["paused"]
	require.Equal(t, "enabled", good.State)
	require.Equal(t, "enabled", bad.State)
	require.Equal(t, "disabled", off.State)
	require.Equal(t, "paused for the <b>migration</b>", off.Reason, "the reason, as text")
	require.Empty(t, good.Reason)
	next := path(okJob, "properties", "status", "nextExecutionTime").(string)
	require.Equal(t, start.Format(time.RFC3339), next)
	require.Equal(t, next, good.NextTime)
	require.Equal(t, shownAt(t, start, ""), good.NextText, "a job without a zone: UTC alone")
	require.Regexp(t, `in (59|60) min$`, good.Next)
	last, err := time.Parse(time.RFC3339Nano, path(okJob, "properties", "status", "lastExecutionTime").(string))
	require.NoError(t, err)
	require.Equal(t, shownAt(t, last, ""), good.LastText)
	require.Equal(t, "2 / 0 / 0", good.Counts)
	require.Equal(t, "1 / 1 / 1", bad.Counts)
	require.Equal(t, "–", off.Last, "a job that never ran has no last run")

	require.Equal(t, []string{"run run-completed", "run run-completed"}, good.Runs)
	require.Equal(t, []string{"run run-failed"}, bad.Runs)
	require.Empty(t, off.Runs)
	require.True(t, strings.HasPrefix(bad.RunLabels[0], "Failed at "), bad.RunLabels)
	require.Contains(t, bad.RunLabels[0], "500")
	require.Len(t, bad.Messages, 1)
	require.Contains(t, bad.Messages[0], markup, "the target's answer is shown as text")
	require.Zero(t, v.Elements, "no markup of the data became elements")
	require.Nil(t, v.Pwned)
	require.Contains(t, v.Status, "1 collection(s) of sub1")
	require.Empty(t, v.Error)

	// The preview form: every other day at 09:00 UTC from 2030 on.
	want := d.do(t, http.MethodPost, "/recur/v1/preview?count=3", map[string]any{
		"startTime": "2030-01-01T09:00:00Z", "recurrence": map[string]any{"frequency": "Day", "interval": 2}}, http.StatusOK)
	require.Equal(t, []any{"2030-01-01T09:00:00Z", "2030-01-03T09:00:00Z", "2030-01-05T09:00:00Z"}, want["value"])
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetValue(chromedp.ID("pv-frequency"), "Day"),
		chromedp.SetValue(chromedp.ID("pv-interval"), "2"),
		chromedp.SendKeys(chromedp.ID("pv-start"), "2030-01-01T09:00:00Z"),
		chromedp.SetValue(chromedp.ID("pv-count"), "3"),
		chromedp.Click(chromedp.CSS(`#preview-form button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#preview-result[data-count] li`))))
	times, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
		`Array.from(document.querySelectorAll('#preview-result time')).map((t) => t.dateTime + ' ' + t.textContent)`))
	require.NoError(t, err)
	require.Equal(t, []string{
		"2030-01-01T09:00:00Z 2030-01-01 09:00 UTC",
		"2030-01-03T09:00:00Z 2030-01-03 09:00 UTC",
		"2030-01-05T09:00:00Z 2030-01-05 09:00 UTC",
	}, times)

	// A bad recurrence answers with the field at fault.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetValue(chromedp.ID("pv-interval"), "600"),
		chromedp.Click(chromedp.CSS(`#preview-form button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID("preview-error"))))
	msg, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("preview-error")))
	require.NoError(t, err)
	require.Contains(t, msg, "Error 400")
	require.Contains(t, msg, "recurrence.interval")

	// A cron replaces frequency and interval: the first Monday of each
	// month at 09:00 (2030-01-01 is a Tuesday).
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetValue(chromedp.ID("pv-interval"), "2"),
		chromedp.SendKeys(chromedp.ID("pv-cron"), "0 9 * * MON#1"),
		chromedp.Click(chromedp.CSS(`#preview-form button[type=submit]`)),
		chromedp.WaitNotVisible(chromedp.ID("preview-error"))))
	require.Eventually(t, func() bool {
		times, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
			`Array.from(document.querySelectorAll('#preview-result time')).map((t) => t.dateTime)`))
		return err == nil && slices.Equal(times, []string{"2030-01-07T09:00:00Z", "2030-02-04T09:00:00Z", "2030-03-04T09:00:00Z"})
	}, 10*time.Second, 100*time.Millisecond, "the cron's preview")

	// A run a DST transition moved is marked: 02:30 daily in Berlin, which
	// skips 02:00-03:00 on 2027-03-28. The times show in Berlin beside UTC.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`(() => {
			const f = document.getElementById('preview-form').elements;
			f.cron.value = ''; f.interval.value = '1'; f.startTime.value = '2027-03-27T00:00:00Z';
			f.timeZone.value = 'Europe/Berlin'; f.schedule.value = '{"hours":[2],"minutes":[30]}'; f.dstRepeat.value = 'both';
		})()`),
		chromedp.Click(chromedp.CSS(`#preview-form button[type=submit]`))))
	require.Eventually(t, func() bool {
		marks, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
			`Array.from(document.querySelectorAll('#preview-result li')).map((li) => (li.dataset.dst || '-') + ' ' + li.textContent)`))
		return err == nil && slices.Equal(marks, []string{
			"- 2027-03-27 02:30 Europe/Berlin (01:30 UTC)",
			"moved 2027-03-28 03:30 Europe/Berlin (01:30 UTC) DST moved it: 2027-03-28T02:30:00 did not exist",
			"- 2027-03-29 02:30 Europe/Berlin (00:30 UTC)",
		})
	}, 10*time.Second, 100*time.Millisecond, "the marked preview")

	// Seconds: recur's Second frequency, a six-field cron, and a raw
	// recurrence sent as written (whatever members the API knows).
	for _, tc := range []struct {
		name, set string
		want      []string
	}{
		{"Second", `f.frequency.value = 'Second'; f.interval.value = '15'; f.raw.value = '';`,
			[]string{"2030-01-01T09:00:00Z", "2030-01-01T09:00:15Z", "2030-01-01T09:00:30Z"}},
		{"six-field cron", `f.cron.value = '10,40 0 9 * * *';`,
			[]string{"2030-01-01T09:00:10Z", "2030-01-01T09:00:40Z", "2030-01-02T09:00:10Z"}},
		{"raw recurrence", `f.cron.value = ''; f.raw.value = '{"frequency":"second","interval":20,"schedule":{"minutes":[5]}}';`,
			[]string{"2030-01-01T09:05:00Z", "2030-01-01T09:05:20Z", "2030-01-01T09:05:40Z"}},
		// RFC 5545 text, its lines as written: the third business day.
		{"RRULE", `f.raw.value = ''; f.rrule.value = 'DTSTART:20300101T090000Z\nRRULE:FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=3';`,
			[]string{"2030-01-03T09:00:00Z", "2030-02-05T09:00:00Z", "2030-03-05T09:00:00Z"}},
		// Several rules, in the recurrence's JSON: their union.
		{"rules", `f.rrule.value = ''; f.raw.value = '{"rules":[{"cron":"0 9 * * *"},{"rrule":"FREQ=DAILY;BYHOUR=17;BYMINUTE=30;BYSECOND=0"}]}';`,
			[]string{"2030-01-01T09:00:00Z", "2030-01-01T17:30:00Z", "2030-01-02T09:00:00Z"}},
	} {
		require.NoError(t, chromedp.Do(ctx,
			chromedp.Evaluate[chromedp.Void](`(() => {
				const f = document.getElementById('preview-form').elements;
				f.startTime.value = '2030-01-01T09:00:00Z'; f.timeZone.value = ''; f.schedule.value = ''; f.dstRepeat.value = 'first';
				`+tc.set+`
			})()`),
			chromedp.Click(chromedp.CSS(`#preview-form button[type=submit]`))))
		require.Eventually(t, func() bool {
			times, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
				`Array.from(document.querySelectorAll('#preview-result time')).map((t) => t.dateTime)`))
			return err == nil && slices.Equal(times, tc.want)
		}, 10*time.Second, 100*time.Millisecond, "the preview of %s", tc.name)
	}
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`document.getElementById('preview-form').elements.raw.value = '{"cron":'`),
		chromedp.Click(chromedp.CSS(`#preview-form button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID("preview-error"))))
	msg, err = chromedp.Run(ctx, chromedp.Text(chromedp.ID("preview-error")))
	require.NoError(t, err)
	require.Contains(t, msg, "the recurrence is not valid JSON")

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-history-of="failing-job"] details').open = true`)))
	browser.Screenshot(t, ctx, "dashboard.png")
}

// authedDashboard starts a stack whose API takes only token, for
// subscription, and the client of the dashboard's tests for it.
func authedDashboard(t *testing.T, token, subscription string) (*recurtest.Stack, dashboardStack) {
	t.Helper()
	tokens, err := api.ParseTokenList(token + "=" + subscription)
	require.NoError(t, err)
	st, err := recurtest.StartWith(recurtest.Config{Auth: tokens})
	require.NoError(t, err)
	t.Cleanup(st.Stop)
	return st, dashboardStack{tenantAPI{base: st.API.URL, token: token}}
}

// TestDashboardShowsMarkupAsText: with API authentication on, the page
// loads without a token and shows nothing until one is pasted; then data
// that holds markup (a collection's location, a target's answer in the
// history, a reason typed to disable a job, a time zone typed in the
// preview form, echoed in the error) appears as text and runs nothing. Job names cannot hold markup: the
// API refuses them.
func TestDashboardShowsMarkupAsText(t *testing.T) {
	const token = "dashboard-token-0123456789"
	st, d := authedDashboard(t, token, "sub-x")
	_, failing := newTargets(t)
	coll := "/subscriptions/sub-x/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/tags"
	d.do(t, http.MethodPut, coll, map[string]any{"location": markup, "properties": map[string]any{}}, http.StatusCreated)
	start := time.Now().UTC().Add(time.Hour).Truncate(time.Second)
	d.do(t, http.MethodPut, coll+"/jobs/"+url.PathEscape("<script>alert(1)</script>"), hourlyJob(failing.URL, start), http.StatusBadRequest)
	d.do(t, http.MethodPut, coll+"/jobs/markup", hourlyJob(failing.URL, start), http.StatusCreated)
	d.runAndWait(t, coll+"/jobs/markup", 1)

	ctx := openDashboard(t)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(st.API.URL+"/dashboard#subscription=sub-x"),
		chromedp.WaitVisible(chromedp.CSS(`#auth.needed`))))
	v := readView(t, ctx)
	require.Empty(t, v.Collections)
	require.Contains(t, v.Error, "Error 401")
	require.NotContains(t, v.Text, "markup", "nothing of the data shows without a token")
	require.NotContains(t, v.Text, "tags")

	require.NoError(t, chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("token"), token),
		chromedp.Click(chromedp.CSS(`#token-form button[type=submit]`))))
	v = waitLoaded(t, ctx, 1)
	require.False(t, v.AuthNeeded)
	require.Equal(t, []string{"tags"}, v.Collections)
	require.Contains(t, v.Meta[0], "location "+markup)
	require.Contains(t, v.Jobs["markup"].Messages[0], markup)
	require.Contains(t, v.Jobs["markup"].RunLabels[0], markup)
	require.Equal(t, []string{"run run-failed"}, v.Jobs["markup"].Runs)
	require.Zero(t, v.Elements, "no markup of the data became elements")
	require.Nil(t, v.Pwned)
	kept, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
		`[sessionStorage.getItem('recur.dashboard.token'), localStorage.length + '', document.getElementById('token').value]`))
	require.NoError(t, err)
	require.Equal(t, []string{token, "0", ""}, kept, "the token is in sessionStorage only, and not left in the field")

	// A reason typed when disabling through the page is kept and shown as
	// text.
	click(t, ctx, "markup", "disable", markup)
	v = waitActed(t, ctx, 1)
	require.Equal(t, "Disabled; its state is disabled.", v.Jobs["markup"].Outcome)
	require.Equal(t, markup, v.Jobs["markup"].Reason)
	require.Equal(t, markup, path(d.do(t, http.MethodGet, coll+"/jobs/markup", nil, http.StatusOK), "properties", "stateReason"))
	require.Zero(t, v.Elements, "no markup of the reason became elements")
	require.Nil(t, v.Pwned)

	zone := `<img src=x onerror=window.pwned=4>`
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("pv-zone"), zone),
		chromedp.Click(chromedp.CSS(`#preview-form button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID("preview-error"))))
	echoed, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
		`[document.getElementById('preview-error').textContent, document.querySelectorAll('#preview-error img').length + '', String(window.pwned ?? '')]`))
	require.NoError(t, err)
	require.Contains(t, echoed[0], zone)
	require.Equal(t, []string{"0", ""}, echoed[1:])

	// Forgetting the token hides the data again.
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.ID("forget-token")),
		chromedp.Click(chromedp.ID("refresh")), chromedp.WaitVisible(chromedp.CSS(`#auth.needed`))))
	v = readView(t, ctx)
	require.Empty(t, v.Collections)
	require.NotContains(t, v.Text, "tags")
	browser.Screenshot(t, ctx, "dashboard-token.png")
}
