package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/internal/browser"
	"github.com/recurhq/recur/internal/recurtest"
)

// rebindHost is the name of the DNS rebinding page: Chromium resolves it
// to 127.0.0.1, as the attacker's DNS would once the page is loaded.
const rebindHost = "rebind.attacker.example"

// crossSitePage is a page of another site that tries to run the job at
// runURL, as any page its user opens could: a fetch with mode no-cors (a
// "simple request": no Content-Type, no preflight) and a form posted into
// a frame. window.attempts says when the fetch has its answer.
const crossSitePage = `<!doctype html><title>another site</title>
<iframe name="sink"></iframe>
<form id="form" method="POST" enctype="text/plain" target="sink" action="%[1]s"><input name='{"a":"' value='b"}'></form>
<script>
window.attempts = {};
fetch('%[1]s', {mode: 'no-cors', method: 'POST'})
  .then(() => { attempts.fetch = 'answered'; }, (e) => { attempts.fetch = 'failed: ' + e; });
document.getElementById('form').submit();
</script>`

// rebindPage is a page under a name its owner pointed at the API's
// machine: to the browser the API is its own origin, so it reads what it
// asks for.
const rebindPage = `<!doctype html><title>rebound</title>
<script>
window.attempts = {};
fetch('%[1]s/run?api-version=2016-03-01', {method: 'POST', headers: {'Content-Type': 'application/json'}})
  .then(async (r) => { attempts.run = r.status + ' ' + await r.text(); }, (e) => { attempts.run = 'failed: ' + e; });
fetch('%[2]s/jobs?api-version=2016-03-01')
  .then(async (r) => { attempts.list = r.status + ' ' + await r.text(); }, (e) => { attempts.list = 'failed: ' + e; });
</script>`

// TestPagesOfOtherSitesCannotDriveTheOpenAPI: headless Chromium opens
// pages that try to run a job of the API without tokens (recur dev's
// default), as any web page its user opens could. A page of another site
// (localhost on another port; the API is at 127.0.0.1) POSTs the job's
// run with a no-cors fetch and with a form; a page under a name pointed
// at this machine (DNS rebinding: Chromium resolves rebind.attacker.example
// to 127.0.0.1, and a proxy passes its requests on with that Host, as the
// API itself would receive them) POSTs it as its own origin and reads the
// job list. The API refuses each, and the job's target is never called:
// after a program runs the job once, it has run once.
func TestPagesOfOtherSitesCannotDriveTheOpenAPI(t *testing.T) {
	ctx, cancel := context.WithTimeout(browser.New(t, chromedp.Flag("host-resolver-rules", "MAP "+rebindHost+" 127.0.0.1")),
		2*time.Minute)
	t.Cleanup(cancel)
	log := &accessLog{}
	s := newStackWith(t, recurtest.Config{Logger: slog.New(log)})
	var calls atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { calls.Add(1) }))
	t.Cleanup(target.Close)
	d := dashboardStack{tenantAPI{base: s.api.URL}}
	d.do(t, http.MethodPut, collectionPath, map[string]any{"location": "westeurope",
		"properties": map[string]any{"sku": map[string]any{"name": "Standard"}}}, http.StatusCreated)
	victim := collectionPath + "/jobs/victim"
	d.do(t, http.MethodPut, victim, hourlyJob(target.URL, time.Now().UTC().Add(24*time.Hour).Truncate(time.Second)), http.StatusCreated)

	runURL := s.api.URL + victim + "/run?api-version=2016-03-01"
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = fmt.Fprintf(w, crossSitePage, runURL)
	}))
	t.Cleanup(other.Close)
	apiURL, err := url.Parse(s.api.URL)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(apiURL) // keeps the Host the browser sent
	rebound := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			proxy.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = fmt.Fprintf(w, rebindPage, victim, collectionPath)
	}))
	t.Cleanup(rebound.Close)

	// The runs the pages asked for, as the API answered them: each row is
	// in the access log once its answer is written.
	runs := func(n int, what string) []accessRow {
		t.Helper()
		var rows []accessRow
		require.Eventually(t, func() bool {
			rows = rows[:0]
			for _, row := range log.all() {
				if row.method == http.MethodPost && row.path == victim+"/run" {
					rows = append(rows, row)
				}
			}
			return len(rows) >= n
		}, 30*time.Second, 50*time.Millisecond, "the API never saw %s", what)
		return rows
	}

	otherURL := strings.Replace(other.URL, "127.0.0.1", "localhost", 1) + "/"
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(otherURL)))
	fetched, err := chromedp.Run(ctx, chromedp.Poll[string](`window.attempts && window.attempts.fetch`,
		chromedp.WithPollingTimeout(30*time.Second)))
	require.NoError(t, err, "the other site's fetch never settled")
	assert.Equal(t, "answered", fetched, "the API answered the fetch (a refusal is an answer too)")
	// The form's request is in flight apart from the fetch: leaving the
	// page before the API has it would cancel it.
	runs(2, "the other site's fetch and form")

	reboundURL := strings.Replace(rebound.URL, "127.0.0.1", rebindHost, 1) + "/"
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(reboundURL)))
	type reboundAttempts struct{ Run, List string }
	got, err := chromedp.Run(ctx, chromedp.Poll[reboundAttempts](`window.attempts && attempts.run && attempts.list && attempts`,
		chromedp.WithPollingTimeout(30*time.Second)))
	require.NoError(t, err, "the rebound page's requests never settled")
	assert.True(t, strings.HasPrefix(got.Run, "403 "), "the rebound page's run: %s", got.Run)
	assert.True(t, strings.HasPrefix(got.List, "403 "), "the rebound page's list: %s", got.List)
	assert.Contains(t, got.List, "HostNotAllowed")
	assert.NotContains(t, got.List, "victim", "the rebound page reads no job")

	all := runs(3, "the runs the three attempts asked for")
	require.Len(t, all, 3)
	for _, row := range all {
		assert.Equal(t, http.StatusForbidden, row.status, "%+v", row)
	}

	// A program's run is the job's first.
	d.runAndWait(t, victim, 1)
	job := d.do(t, http.MethodGet, victim, nil, http.StatusOK)
	assert.Equal(t, 1.0, path(job, "properties", "status", "executionCount"), "the pages' runs never ran")
	assert.EqualValues(t, 1, calls.Load(), "the target was called by the program's run only")
	history := d.do(t, http.MethodGet, victim+"/history", nil, http.StatusOK)
	assert.Len(t, history["value"], 1)
}
