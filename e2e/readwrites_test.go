package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestReadYourWrites: a GET right after any 2xx write of a job or a
// collection shows that write, its definition, state and ETag, with no
// wait: the API reads the workflow's memo, which the workflow writes in
// the task that completes the write's update. Every write that takes
// If-Match (PUT, PATCH, DELETE) is sent first with a stale one, which is
// refused with 412, then with the ETag the last answer gave, which goes
// through: so an If-Match built from each write's ETag (its answer's,
// or the GET's after a write that answers none) succeeds. Run, backfill,
// enable and disable take no If-Match (docs/api.md). It holds whether or
// not the job's action runs meanwhile.
//
// A collection's enable, disable and DELETE show at once on the
// collection's GET, and on its jobs' once the operation has ended: its
// 200, or the 200 of the Location its 202 names (follows).
//
// The lists are not read-your-writes, and the test does not hold them
// to it. A job list takes the job names from the collection's memo and
// the jobs' views from Temporal's visibility store; a collection list
// reads the visibility store alone. The visibility store lags a write
// by the visibility task that copies it there, so a job or collection
// created a moment ago may be missing from its list, one changed a
// moment ago may be listed as it was, and one deleted a moment ago may
// still be listed (a deleted job's name also leaves its collection's
// memo only when its workflow's signal reaches the collection, after
// the DELETE answers); each list shows the write eventually. A deleted
// collection's job list is the exception: it reads the collection's
// memo first, and is a 404 at once.
func TestReadYourWrites(t *testing.T) {
	t.Run("no action runs", func(t *testing.T) { readYourWrites(t, false) })
	t.Run("the actions run", func(t *testing.T) { readYourWrites(t, true) })
}

// rwClient gives every request of the test 30 s: a write or a read that
// hangs fails the test rather than stalling it.
var rwClient = &http.Client{Timeout: 30 * time.Second}

// rwAnswer is an answer of the API.
type rwAnswer struct {
	status int
	header http.Header
	body   map[string]any // nil when empty
	raw    string
}

// rw sends a request to the API (url is absolute, or a path that gets
// api-version) with If-Match when ifMatch is not empty.
func (s *stack) rw(t *testing.T, method, url string, body any, ifMatch string) rwAnswer {
	t.Helper()
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(data)
	}
	if url[0] == '/' {
		url = s.api.URL + url + "?api-version=2016-03-01"
	}
	req, err := http.NewRequest(method, url, rd)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if ifMatch != "" {
		req.Header.Set("If-Match", ifMatch)
	}
	resp, err := rwClient.Do(req)
	require.NoError(t, err, "%s %s", method, url)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	a := rwAnswer{status: resp.StatusCode, header: resp.Header, raw: string(data)}
	if len(data) > 0 {
		require.NoError(t, json.Unmarshal(data, &a.body), a.raw)
	}
	return a
}

// rwResource is a job or a collection the test writes: its ETag as the
// last answer about it gave it, and one it had before.
type rwResource struct {
	s     *stack
	path  string
	etag  string
	stale string
}

func newRWResource(s *stack, p string) *rwResource {
	// Until it has had two ETags, one it never had is as stale.
	return &rwResource{s: s, path: p, stale: `"stale-1"`}
}

// read GETs the resource, which must answer 200 with one ETag in the
// header and the body, and keeps that ETag.
func (r *rwResource) read(t *testing.T) map[string]any {
	t.Helper()
	a := r.s.rw(t, http.MethodGet, r.path, nil, "")
	require.Equal(t, http.StatusOK, a.status, "GET %s: %s", r.path, a.raw)
	etag := a.header.Get("ETag")
	require.NotEmpty(t, etag, "GET %s answers an ETag", r.path)
	require.Equal(t, etag, a.body["etag"], "GET %s: the ETag header is the body's etag", r.path)
	if etag != r.etag && r.etag != "" {
		r.stale = r.etag
	}
	r.etag = etag
	return a.body
}

// gone requires a GET of the resource to be a 404.
func (r *rwResource) gone(t *testing.T) {
	t.Helper()
	a := r.s.rw(t, http.MethodGet, r.path, nil, "")
	require.Equal(t, http.StatusNotFound, a.status, "GET %s right after its DELETE: %s", r.path, a.raw)
}

// write sends a write that takes If-Match: first naming an ETag the
// resource no longer has, which must be a 412, then naming the one it
// has, which must answer one of want.
func (r *rwResource) write(t *testing.T, method string, body any, want ...int) rwAnswer {
	t.Helper()
	a := r.s.rw(t, method, r.path, body, r.stale)
	require.Equal(t, http.StatusPreconditionFailed, a.status, "%s %s with the stale If-Match %s: %s", method, r.path, r.stale, a.raw)
	a = r.s.rw(t, method, r.path, body, r.etag)
	require.Contains(t, want, a.status, "%s %s with If-Match %s: %s", method, r.path, r.etag, a.raw)
	return a
}

// defined requires a write's answer to carry an ETag, the same in the
// header and the body, and a GET right after it to answer that ETag; it
// returns the GET's body.
func (r *rwResource) defined(t *testing.T, a rwAnswer) map[string]any {
	t.Helper()
	etag := a.header.Get("ETag")
	require.NotEmpty(t, etag, "the write answers an ETag: %s", a.raw)
	require.Equal(t, etag, a.body["etag"], "the write's ETag header is its body's etag")
	got := r.read(t)
	require.Equal(t, etag, r.etag, "GET %s right after the write answers the write's ETag", r.path)
	return got
}

// unchanged requires a GET right after a write that leaves the
// definition as it was (a run, a backfill) to answer the ETag before it.
func (r *rwResource) unchanged(t *testing.T) map[string]any {
	t.Helper()
	before := r.etag
	got := r.read(t)
	require.Equal(t, before, r.etag, "GET %s: a run or a backfill leaves the ETag", r.path)
	return got
}

// revised requires a GET right after a write that answers no ETag but
// changes the definition (a collection's enable, disable) to answer a
// new one.
func (r *rwResource) revised(t *testing.T) map[string]any {
	t.Helper()
	before := r.etag
	got := r.read(t)
	require.NotEqual(t, before, r.etag, "GET %s right after the write answers a new ETag", r.path)
	return got
}

// follows requires a GET of a job right after its collection's operation
// has ended to show the state the operation gave it, with a new ETag, or
// for "" that it is gone: the operation ends once every job took it, in
// the workflow task that writes the job's memo.
func (r *rwResource) follows(t *testing.T, state string) {
	t.Helper()
	if state == "" {
		r.gone(t)
		return
	}
	before := r.etag
	got := r.read(t)
	require.Equal(t, state, path(got, "properties", "state"), "%s right after its collection's operation", r.path)
	require.NotEqual(t, before, r.etag, "%s: a change of state gives a new ETag", r.path)
}

// operation requires a collection's DELETE, enable or disable to have
// answered 200, or 202 and then 200 at its Location: the operation's
// end, after which the collection's GET must show it.
func (s *stack) operation(t *testing.T, a rwAnswer) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for a.status == http.StatusAccepted {
		require.True(t, time.Now().Before(deadline), "the operation still runs after 30 s")
		// The Location's GET waits up to two seconds itself for the end.
		a = s.rw(t, http.MethodGet, a.header.Get("Location"), nil, "")
	}
	require.Equal(t, http.StatusOK, a.status, a.raw)
}

// rwTarget is a job target that answers 200 at once or, with hold,
// holds every request until the test ends, so that an action runs
// throughout the test. arrived gets a value per request.
func rwTarget(t *testing.T, hold bool) (srv *httptest.Server, arrived <-chan struct{}) {
	ch := make(chan struct{}, 16)
	release := make(chan struct{})
	srv = newJobTarget(func(w http.ResponseWriter, r *http.Request) {
		select {
		case ch <- struct{}{}:
		default:
		}
		if !hold {
			return
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(srv.Close)
	// Cleanups run last first: the held requests are let go before
	// Close, which waits for them.
	t.Cleanup(func() { close(release) })
	return srv, ch
}

// arrive waits until the target got a request.
func arrive(t *testing.T, arrived <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: the target got no request in 30 s", what)
	}
}

// rwJob is a daily job whose X-Rev header is rev. Its schedule began
// three days ago, so that a backfill has a past occurrence to run, and
// its next occurrence is an hour away, so that none runs during the test.
func rwJob(uri, rev string) map[string]any {
	start := time.Now().UTC().Add(time.Hour - 72*time.Hour).Truncate(time.Second)
	return map[string]any{"properties": map[string]any{
		"startTime": start.Format(time.RFC3339),
		"action": map[string]any{"type": "Http", "request": map[string]any{
			"uri": uri, "method": "GET", "headers": map[string]string{"X-Rev": rev}}},
		"recurrence": map[string]any{"frequency": "Day"},
	}}
}

// collectionLists are the lists a collection of collectionPath is in.
var collectionLists = []string{
	"/subscriptions/sub1/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections",
	"/subscriptions/sub1/providers/Microsoft.Scheduler/jobCollections",
}

// listsEventually requires each list to show id (or not to) within 20 s:
// lists lag writes (TestReadYourWrites).
func (s *stack) listsEventually(t *testing.T, lists []string, id string, shown bool) {
	t.Helper()
	for _, list := range lists {
		var a rwAnswer
		require.Eventually(t, func() bool {
			a = s.rw(t, http.MethodGet, list, nil, "")
			return a.status == http.StatusOK && slices.Contains(listIDs(t, a.body), id) == shown
		}, 20*time.Second, 50*time.Millisecond, "%s shows %s: %v; last answer %d %s", list, id, shown, a.status, a.raw)
	}
}

func readYourWrites(t *testing.T, running bool) {
	s := newStack(t)
	target, arrived := rwTarget(t, running)
	jobsPath := collectionPath + "/jobs"

	coll := newRWResource(s, collectionPath)
	a := s.rw(t, http.MethodPut, collectionPath, map[string]any{"location": "westus", "tags": map[string]string{"rev": "1"},
		"properties": map[string]any{"sku": map[string]any{"name": "Standard"}}}, "")
	require.Equal(t, http.StatusCreated, a.status, a.raw)
	got := coll.defined(t, a)
	require.Equal(t, "1", path(got, "tags", "rev"))
	require.Equal(t, "enabled", path(got, "properties", "state"))
	s.listsEventually(t, collectionLists, collectionPath, true)

	// job is the job every job write goes to; other stays in the
	// collection for its DELETE.
	job := newRWResource(s, jobsPath+"/job")
	a = s.rw(t, http.MethodPut, job.path, rwJob(target.URL+"/v1", "1"), "")
	require.Equal(t, http.StatusCreated, a.status, a.raw)
	got = job.defined(t, a)
	require.Equal(t, target.URL+"/v1", path(got, "properties", "action", "request", "uri"))
	require.Equal(t, "enabled", path(got, "properties", "state"))
	other := newRWResource(s, jobsPath+"/other")
	a = s.rw(t, http.MethodPut, other.path, rwJob(target.URL+"/other", "1"), "")
	require.Equal(t, http.StatusCreated, a.status, a.raw)
	other.defined(t, a)
	s.listsEventually(t, []string{jobsPath}, job.path, true)
	s.listsEventually(t, []string{jobsPath}, other.path, true)

	// run runs r now. Without held actions it waits for the run's end, so
	// that the next write meets no action running.
	runs := 0
	run := func(r *rwResource) {
		t.Helper()
		a := s.rw(t, http.MethodPost, r.path+"/run", nil, "")
		require.Equal(t, http.StatusOK, a.status, a.raw)
		got := r.unchanged(t)
		require.Equal(t, "enabled", path(got, "properties", "state"))
		arrive(t, arrived, "run "+r.path)
		if !running {
			runs++
			require.Eventually(t, func() bool {
				return path(r.read(t), "properties", "status", "executionCount") == float64(runs)
			}, 20*time.Second, 50*time.Millisecond, "the run of %s ends", r.path)
		}
	}
	if running {
		run(job)
		run(other)
	}

	a = coll.write(t, http.MethodPut, map[string]any{"location": "westus", "tags": map[string]string{"rev": "2"},
		"properties": map[string]any{"sku": map[string]any{"name": "Standard"}}}, http.StatusOK)
	require.Equal(t, "2", path(coll.defined(t, a), "tags", "rev"))
	a = coll.write(t, http.MethodPatch, map[string]any{"properties": map[string]any{"quota": map[string]any{"maxJobCount": 20}}}, http.StatusOK)
	got = coll.defined(t, a)
	require.EqualValues(t, 20, path(got, "properties", "quota", "maxJobCount"))
	require.Equal(t, "2", path(got, "tags", "rev"), "PATCH keeps what it does not name")

	a = job.write(t, http.MethodPut, rwJob(target.URL+"/v2", "2"), http.StatusOK)
	got = job.defined(t, a)
	require.Equal(t, target.URL+"/v2", path(got, "properties", "action", "request", "uri"))
	require.Equal(t, "2", path(got, "properties", "action", "request", "headers", "X-Rev"))

	run(job)

	a = job.write(t, http.MethodPatch, map[string]any{"properties": map[string]any{"action": map[string]any{
		"request": map[string]any{"headers": map[string]string{"X-Rev": "3"}}}}}, http.StatusOK)
	got = job.defined(t, a)
	require.Equal(t, "3", path(got, "properties", "action", "request", "headers", "X-Rev"))
	require.Equal(t, target.URL+"/v2", path(got, "properties", "action", "request", "uri"), "PATCH keeps what it does not name")

	start := path(got, "properties", "startTime").(string)
	a = s.rw(t, http.MethodPost, job.path+"/backfill", map[string]any{"startTime": start, "endTime": start}, "")
	require.Equal(t, http.StatusAccepted, a.status, a.raw)
	require.EqualValues(t, 1, a.body["queued"], a.raw)
	require.Equal(t, "enabled", path(job.unchanged(t), "properties", "state"))
	if !running {
		arrive(t, arrived, "the backfill")
		runs++
		require.Eventually(t, func() bool {
			return path(job.read(t), "properties", "status", "executionCount") == float64(runs)
		}, 20*time.Second, 50*time.Millisecond, "the backfilled occurrence ends")
	}

	a = job.write(t, http.MethodPatch, map[string]any{"properties": map[string]any{"state": "Disabled"}}, http.StatusOK)
	require.Equal(t, "disabled", path(job.defined(t, a), "properties", "state"))
	a = job.write(t, http.MethodPatch, map[string]any{"properties": map[string]any{"state": "Enabled"}}, http.StatusOK)
	require.Equal(t, "enabled", path(job.defined(t, a), "properties", "state"))

	// Disabling the collection disables its jobs, which gives them new
	// ETags; enabling it enables them again.
	s.operation(t, s.rw(t, http.MethodPost, collectionPath+"/disable", nil, ""))
	require.Equal(t, "disabled", path(coll.revised(t), "properties", "state"))
	job.follows(t, "disabled")
	other.follows(t, "disabled")
	a = coll.write(t, http.MethodPatch, map[string]any{"tags": map[string]string{"rev": "3"}}, http.StatusOK)
	got = coll.defined(t, a)
	require.Equal(t, "3", path(got, "tags", "rev"))
	require.Equal(t, "disabled", path(got, "properties", "state"), "PATCH keeps what it does not name")
	a = job.write(t, http.MethodPatch, map[string]any{"properties": map[string]any{"action": map[string]any{
		"request": map[string]any{"headers": map[string]string{"X-Rev": "4"}}}}}, http.StatusOK)
	got = job.defined(t, a)
	require.Equal(t, "4", path(got, "properties", "action", "request", "headers", "X-Rev"))
	require.Equal(t, "disabled", path(got, "properties", "state"), "a job of a disabled collection stays disabled")
	s.operation(t, s.rw(t, http.MethodPost, collectionPath+"/enable", nil, ""))
	require.Equal(t, "enabled", path(coll.revised(t), "properties", "state"))
	job.follows(t, "enabled")
	other.follows(t, "enabled")

	if running {
		for _, r := range []*rwResource{job, other} {
			require.EqualValues(t, 0, path(r.read(t), "properties", "status", "executionCount"),
				"%s: no held run has ended, so every write met its action running", r.path)
		}
	}

	a = job.write(t, http.MethodDelete, nil, http.StatusOK)
	job.gone(t)
	s.listsEventually(t, []string{jobsPath}, job.path, false)
	s.listsEventually(t, []string{jobsPath}, other.path, true)

	s.operation(t, coll.write(t, http.MethodDelete, nil, http.StatusOK, http.StatusAccepted))
	coll.gone(t)
	other.follows(t, "")
	a = s.rw(t, http.MethodGet, jobsPath, nil, "")
	require.Equal(t, http.StatusNotFound, a.status, "the job list of a deleted collection: %s", a.raw)
	s.listsEventually(t, collectionLists, collectionPath, false)
}
