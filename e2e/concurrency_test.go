package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/activities"
)

// Operations of the concurrency test.
const (
	opPutJob     = "PUT job"
	opPatchJob   = "PATCH job"
	opDeleteJob  = "DELETE job"
	opRunJob     = "POST run"
	opPutColl    = "PUT collection"
	opPatchColl  = "PATCH collection"
	opDeleteColl = "DELETE collection"
)

const (
	concurrentRequests = 200
	// raceQuota is the maxJobCount of both collections, for more job names.
	raceQuota  = 4
	raceRGPath = "/subscriptions/sub1/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/"
	// raceClientTimeout turns a request the API never answers into a
	// failure; the API gives up on Temporal after 30 s.
	raceClientTimeout = 40 * time.Second
)

// allowed lists the answers some serial order of the requests could give
// r. A 5xx is never one of them. Collection "race" is never deleted;
// "doomed" is, once, and may be created again by a later PUT.
func allowed(r *raceRequest) []int {
	doomed := r.coll == "doomed"
	switch r.op {
	case opPutJob:
		if doomed {
			return []int{http.StatusOK, http.StatusCreated, http.StatusNotFound, http.StatusConflict}
		}
		return []int{http.StatusOK, http.StatusCreated, http.StatusConflict}
	case opPatchJob, opDeleteJob, opRunJob:
		// A PATCH never creates a job, so it is never over the quota.
		return []int{http.StatusOK, http.StatusNotFound}
	case opPutColl:
		if doomed {
			return []int{http.StatusOK, http.StatusCreated}
		}
		return []int{http.StatusOK}
	case opPatchColl:
		if doomed {
			return []int{http.StatusOK, http.StatusNotFound}
		}
		return []int{http.StatusOK}
	case opDeleteColl:
		return []int{http.StatusOK}
	}
	return nil
}

// raceRequest is one of the concurrent requests and its answer.
type raceRequest struct {
	op, coll, job string
	method, path  string
	body          any
	status        int
	answer        string
	err           error
}

// marker is what a request writes into the job or collection it changes,
// so that the final state names the request it came from.
func marker(i int, op string) string {
	return fmt.Sprintf("%s#%d", strings.ReplaceAll(strings.ToLower(op), " ", "-"), i)
}

// runCounter is an HTTP target counting the requests of each job, and
// the Idempotency-Key of each, so that a failure tells a delivery repeated
// under its key from a run too many.
type runCounter struct {
	mu   sync.Mutex
	hits map[string]int
	keys []string
}

func newRunCounter(t *testing.T) (*httptest.Server, *runCounter) {
	rc := &runCounter{hits: map[string]int{}}
	srv := newJobTarget(func(w http.ResponseWriter, r *http.Request) {
		rc.mu.Lock()
		rc.hits[r.Header.Get(activities.HeaderCollectionID)+"/"+r.Header.Get(activities.HeaderJobID)]++
		rc.keys = append(rc.keys, r.Header.Get(activities.HeaderIdempotencyKey))
		rc.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	})
	t.Cleanup(srv.Close)
	return srv, rc
}

// String lists the keys of the requests, in the order they came.
func (rc *runCounter) String() string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return strings.Join(rc.keys, "\n")
}

func (rc *runCounter) snapshot() map[string]int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return maps.Clone(rc.hits)
}

// raceCollection is a collection of quota raceQuota tagged with marker m.
func raceCollection(m string) map[string]any {
	return map[string]any{"location": "westus", "tags": map[string]string{"marker": m}, "properties": map[string]any{
		"sku": map[string]any{"name": "Standard"}, "quota": map[string]any{"maxJobCount": raceQuota}}}
}

// raceJob is an hourly job an hour away (no scheduled run happens during
// the test) whose request body is m.
func raceJob(uri, m string) map[string]any {
	job := httpJob(uri, map[string]any{"frequency": "Hour"})
	job["properties"].(map[string]any)["action"].(map[string]any)["request"].(map[string]any)["body"] = m
	return job
}

// send is stack.do for goroutines: it reports failures instead of
// failing the test, with a client that gives up after raceClientTimeout.
func (s *stack) send(client *http.Client, r *raceRequest) {
	data, err := json.Marshal(r.body)
	if err != nil {
		r.err = err
		return
	}
	req, err := http.NewRequest(r.method, s.api.URL+r.path+"?api-version=2016-03-01", bytes.NewReader(data))
	if err != nil {
		r.err = err
		return
	}
	req.Header.Set("Content-Type", "application/json")
	// The collection's DELETE answers as its operation ends.
	resp, err := followed(client, req)
	if err != nil {
		r.err = err
		return
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	r.status, r.answer, r.err = resp.StatusCode, string(answer), err
}

// raceRequests builds n requests on two collections: "race" (quota
// raceQuota, eight job names competing) gets most of them; "doomed" gets
// the rest, among them one DELETE of the collection.
func raceRequests(rng *rand.Rand, uri string, n int) []*raceRequest {
	type share struct {
		op     string
		weight int
	}
	mix := []share{{opPutJob, 35}, {opPatchJob, 20}, {opDeleteJob, 15}, {opRunJob, 20}, {opPutColl, 5}, {opPatchColl, 5}}
	total := 0
	for _, s := range mix {
		total += s.weight
	}
	reqs := make([]*raceRequest, n)
	for i := range reqs {
		r := &raceRequest{coll: "race", job: fmt.Sprintf("a%d", rng.IntN(8))}
		if i%6 == 5 {
			r.coll, r.job = "doomed", fmt.Sprintf("b%d", rng.IntN(4))
		}
		w := rng.IntN(total)
		for _, s := range mix {
			if w < s.weight {
				r.op = s.op
				break
			}
			w -= s.weight
		}
		reqs[i] = r
	}
	reqs[n/2] = &raceRequest{op: opDeleteColl, coll: "doomed"}
	for i, r := range reqs {
		m := marker(i, r.op)
		collPath := raceRGPath + r.coll
		jobPath := collPath + "/jobs/" + r.job
		switch r.op {
		case opPutJob:
			r.method, r.path, r.body = http.MethodPut, jobPath, raceJob(uri, m)
		case opPatchJob:
			r.method, r.path, r.body = http.MethodPatch, jobPath,
				map[string]any{"properties": map[string]any{"action": map[string]any{"request": map[string]any{"body": m}}}}
		case opDeleteJob:
			r.method, r.path = http.MethodDelete, jobPath
		case opRunJob:
			r.method, r.path = http.MethodPost, jobPath+"/run"
		case opPutColl:
			r.method, r.path, r.job, r.body = http.MethodPut, collPath, "", raceCollection(m)
		case opPatchColl:
			r.method, r.path, r.job, r.body = http.MethodPatch, collPath, "", map[string]any{"tags": map[string]string{"marker": m}}
		case opDeleteColl:
			r.method, r.path = http.MethodDelete, collPath
		}
	}
	return reqs
}

// TestConcurrentWritesStayConsistent fires 200 PUT, PATCH, DELETE and run
// requests at once on the same jobs and collections. Every request must be
// answered with a status some serial order could give, and the final
// state must be one some serial order leaves: the jobs that exist are the
// ones the collection lists and counts against its quota, each carries
// the marker of a request that succeeded, and no job ran more often than
// it was asked to.
func TestConcurrentWritesStayConsistent(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: hundreds of concurrent writes (about 10 s)")
	}
	s := newStack(t)
	target, counter := newRunCounter(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))

	// Both collections start with jobs, so that PATCH, DELETE and run have
	// something to work on from the first request. succeeded[m] is the
	// target ("coll" or "coll/job") of the 2xx request that wrote marker m.
	succeeded := map[string]string{}
	for _, c := range []struct {
		name string
		jobs []string
	}{{"race", []string{"a0", "a1"}}, {"doomed", []string{"b0", "b1", "b2"}}} {
		m := "setup-" + c.name
		status, body := s.do(t, http.MethodPut, raceRGPath+c.name, raceCollection(m))
		require.Equal(t, http.StatusCreated, status, body)
		succeeded[m] = c.name
		for _, j := range c.jobs {
			m := "setup-" + c.name + "/" + j
			status, body = s.do(t, http.MethodPut, raceRGPath+c.name+"/jobs/"+j, raceJob(target.URL, m))
			require.Equal(t, http.StatusCreated, status, body)
			succeeded[m] = c.name + "/" + j
		}
	}

	reqs := raceRequests(rng, target.URL, concurrentRequests)
	client := &http.Client{Timeout: raceClientTimeout}
	began := time.Now()
	start := make(chan struct{})
	var wg sync.WaitGroup
	for _, r := range reqs {
		wg.Go(func() {
			<-start
			s.send(client, r)
		})
	}
	close(start)
	wg.Wait()
	t.Logf("%d concurrent requests answered in %s", len(reqs), time.Since(began).Round(time.Millisecond))

	// Every request answered, with a status a serial order could give;
	// all of the wrong ones are listed.
	tally := map[string]map[int]int{}
	for i, r := range reqs {
		if assert.NoError(t, r.err, "request %d: %s %s", i, r.method, r.path) {
			assert.Contains(t, allowed(r), r.status, "request %d: %s %s answered %d: %s", i, r.method, r.path, r.status, r.answer)
		}
		if tally[r.op] == nil {
			tally[r.op] = map[int]int{}
		}
		tally[r.op][r.status]++
	}
	t.Logf("answers: %v", tally)
	// The final state is checked all the same: a request answered 5xx
	// counts as one that failed, and must have left no trace.

	// runs counts the 2xx run-now answers of each job; deleted holds the
	// jobs a DELETE answered 2xx may have ended, their own or their
	// collection's.
	runs := map[string]int{}
	deleted := map[string]bool{}
	collectionDeleted := map[string]bool{}
	for i, r := range reqs {
		if r.status/100 != 2 {
			continue
		}
		switch r.op {
		case opPutJob, opPatchJob:
			succeeded[marker(i, r.op)] = r.coll + "/" + r.job
		case opPutColl, opPatchColl:
			succeeded[marker(i, r.op)] = r.coll
		case opRunJob:
			runs[r.coll+"/"+r.job]++
		case opDeleteJob:
			deleted[r.coll+"/"+r.job] = true
		case opDeleteColl:
			collectionDeleted[r.coll] = true
		}
	}
	mayBeCancelled := func(job string) bool {
		return deleted[job] || collectionDeleted[strings.SplitN(job, "/", 2)[0]]
	}

	// Every run answered 200 runs, once; a DELETE cancels the runs in
	// flight of the jobs it ends, so a job deleted in the race may have
	// run fewer. Nothing else runs, since every schedule starts an hour
	// from now.
	ranAll := assert.Eventually(t, func() bool {
		hits := counter.snapshot()
		for j, n := range runs {
			if hits[j] < n && !mayBeCancelled(j) {
				return false
			}
		}
		return true
	}, 20*time.Second, 100*time.Millisecond)
	require.True(t, ranAll, "runs answered 200 %v, target hits %v, their keys:\n%s", runs, counter.snapshot(), counter)
	ranMore := !assert.Never(t, func() bool {
		for j, n := range counter.snapshot() {
			if n > runs[j] {
				return true
			}
		}
		return false
	}, 2*time.Second, 100*time.Millisecond)
	require.False(t, ranMore, "runs answered 200 %v, target hits %v, their keys:\n%s", runs, counter.snapshot(), counter)

	s.requireConsistent(t, "race", "a", 8, succeeded, runs, target.URL)
	s.requireConsistent(t, "doomed", "b", 4, succeeded, runs, target.URL)
}

// requireConsistent checks collection coll, whose jobs were named prefix0
// to prefix(n-1), after the race. A deleted collection has no job left
// (and is created again for the checks that follow). A live one carries
// the marker of a successful request on it; its jobs are those GET finds,
// each defined by a successful request on it, and the list and the
// quota count exactly them.
func (s *stack) requireConsistent(t *testing.T, coll, prefix string, n int, succeeded map[string]string, runs map[string]int, uri string) {
	t.Helper()
	collPath := raceRGPath + coll
	names := make([]string, n)
	for i := range names {
		names[i] = prefix + strconv.Itoa(i)
	}
	status, body := s.do(t, http.MethodGet, collPath, nil)
	if status == http.StatusNotFound {
		t.Logf("collection %s: deleted", coll)
		for _, name := range names {
			status, job := s.do(t, http.MethodGet, collPath+"/jobs/"+name, nil)
			require.Equal(t, http.StatusNotFound, status, "%s/%s outlives its deleted collection: %v", coll, name, job)
		}
		status, body = s.do(t, http.MethodPut, collPath, raceCollection("again-"+coll))
		require.Equal(t, http.StatusCreated, status, body)
		succeeded["again-"+coll] = coll
	} else {
		require.Equal(t, http.StatusOK, status, body)
	}
	m, _ := path(body, "tags", "marker").(string)
	require.Equal(t, coll, succeeded[m], "collection %s carries marker %q of no successful request on it", coll, m)
	require.EqualValues(t, raceQuota, path(body, "properties", "quota", "maxJobCount"))

	existing := []string{}
	for _, name := range names {
		status, job := s.do(t, http.MethodGet, collPath+"/jobs/"+name, nil)
		if status == http.StatusNotFound {
			continue
		}
		require.Equal(t, http.StatusOK, status, "%s/%s: %v", coll, name, job)
		existing = append(existing, name)
		m, _ := path(job, "properties", "action", "request", "body").(string)
		require.Equal(t, coll+"/"+name, succeeded[m], "%s/%s carries marker %q of no successful PUT or PATCH on it", coll, name, m)
		count, _ := path(job, "properties", "status", "executionCount").(float64)
		require.LessOrEqual(t, int(count), runs[coll+"/"+name], "%s/%s: executionCount %v, runs answered 200: %d", coll, name, count, runs[coll+"/"+name])
	}
	t.Logf("collection %s: jobs %v", coll, existing)
	require.LessOrEqual(t, len(existing), raceQuota, "collection %s holds more jobs than its quota", coll)
	s.listEventually(t, collPath+"/jobs", nil, jobNames, existing)

	// The collection counts exactly the jobs that exist: the remaining
	// capacity is accepted, one more job is refused.
	for i := range raceQuota - len(existing) {
		status, body := s.do(t, http.MethodPut, fmt.Sprintf("%s/jobs/fill%d", collPath, i), raceJob(uri, "fill"))
		require.Equal(t, http.StatusCreated, status, "%s has %v: job %d of the remaining capacity: %v", coll, existing, i, body)
	}
	status, body = s.do(t, http.MethodPut, collPath+"/jobs/overflow", raceJob(uri, "fill"))
	require.Equal(t, http.StatusConflict, status, "%s has %v, so it is full: %v", coll, existing, body)
}
