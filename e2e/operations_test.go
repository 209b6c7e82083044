package e2e

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc"

	"github.com/recurhq/recur/api"
	"github.com/recurhq/recur/internal/recurtest"
	"github.com/recurhq/recur/jobs"
)

// TestLongCollectionOperationsAnswerBehindTheirLocation: a collection's
// DELETE, enable and disable that outlast the operation wait (here none
// at all) answer 202 with a Location and Retry-After, as ARM's
// long-running operations do; the Location answers 202 while the
// workflow tells the jobs and 200 once it has, for good, even after the
// collection is created again. It is the tenant's own: another tenant
// and another collection's path find nothing there.
func TestLongCollectionOperationsAnswerBehindTheirLocation(t *testing.T) {
	tokens, err := api.ParseTokenList(tokenTenantA + "=sub-a;" + tokenTenantB + "=sub-b")
	require.NoError(t, err)
	st := newStackWith(t, recurtest.Config{Auth: tokens, OperationWait: time.Nanosecond})
	a := tenantAPI{st.api.URL, tokenTenantA}
	b := tenantAPI{st.api.URL, tokenTenantB}
	const coll = "/subscriptions/sub-a/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/many"
	res := a.do(t, http.MethodPut, coll, map[string]any{"properties": map[string]any{}})
	require.Equal(t, http.StatusCreated, res.status, string(res.body))
	jobNames := []string{"j1", "j2", "j3"}
	for _, j := range jobNames {
		res := a.do(t, http.MethodPut, coll+"/jobs/"+j, httpJob("http://127.0.0.1:9/", map[string]any{"frequency": "Hour"}))
		require.Equal(t, http.StatusCreated, res.status, string(res.body))
	}

	// accepted checks a 202 and returns its Location's path and query.
	accepted := func(res answer) string {
		t.Helper()
		require.Equal(t, http.StatusAccepted, res.status, string(res.body))
		require.Equal(t, "1", res.header.Get("Retry-After"))
		loc, err := url.Parse(res.header.Get("Location"))
		require.NoError(t, err)
		require.Equal(t, st.api.URL, loc.Scheme+"://"+loc.Host)
		require.True(t, strings.HasPrefix(loc.Path, coll+"/operations/"), loc.Path)
		require.Equal(t, api.APIVersion, loc.Query().Get("api-version"))
		return loc.Path
	}
	// ends polls an operation until it is no longer 202.
	ends := func(op string) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			res := a.do(t, http.MethodGet, op, nil)
			if res.status != http.StatusAccepted {
				require.Equal(t, http.StatusOK, res.status, string(res.body))
				return
			}
			accepted(res)
			require.True(t, time.Now().Before(deadline), "%s still runs after 30 s", op)
		}
	}
	// Once an operation has ended, every job shows it.
	jobsAre := func(state string) {
		t.Helper()
		for _, j := range jobNames {
			require.Equal(t, state, path(a.do(t, http.MethodGet, coll+"/jobs/"+j, nil).json(t), "properties", "state"), j)
		}
	}

	disable := accepted(a.do(t, http.MethodPost, coll+"/disable", nil))
	ends(disable)
	jobsAre("disabled")
	ends(accepted(a.do(t, http.MethodPost, coll+"/enable", nil)))
	jobsAre("enabled")

	// A refusal answers at once, never 202.
	res = a.do(t, http.MethodPost, strings.Replace(coll, "/many", "/missing", 1)+"/disable", nil)
	require.Equal(t, http.StatusNotFound, res.status, string(res.body))

	deletion := accepted(a.do(t, http.MethodDelete, coll, nil))
	ends(deletion)
	require.Equal(t, http.StatusNotFound, a.do(t, http.MethodGet, coll, nil).status)
	for _, j := range jobNames {
		require.Equal(t, http.StatusNotFound, a.do(t, http.MethodGet, coll+"/jobs/"+j, nil).status, "%s is gone", j)
	}

	// The collection again: a new workflow run, which the old
	// operations do not reach; they still say how they ended.
	res = a.do(t, http.MethodPut, coll, map[string]any{"properties": map[string]any{}})
	require.Equal(t, http.StatusCreated, res.status, string(res.body))
	ends(deletion)
	ends(disable)

	op := deletion[strings.LastIndex(deletion, "/")+1:]
	runID, updateID, _ := strings.Cut(op, ".")
	const unknown = "0b0e8e4c-8f5e-4f0e-9a3e-6f0b0e8e4c8f"
	for name, target := range map[string]string{
		"another tenant's token":     "",
		"another collection's path":  strings.Replace(deletion, "/many/", "/other/", 1),
		"another run of the same ID": coll + "/operations/" + updateID + "." + updateID,
		"not an operation ID":        coll + "/operations/" + runID,
		"an unknown update":          coll + "/operations/" + runID + "." + unknown,
		"an unknown run":             coll + "/operations/" + unknown + "." + updateID,
	} {
		res := a.do(t, http.MethodGet, target, nil)
		if target == "" {
			res = b.do(t, http.MethodGet, deletion, nil)
		}
		require.Equal(t, http.StatusNotFound, res.status, "%s: %s", name, res.body)
	}
}

// TestCollectionOperationsAnswerWhileTheirJobsWaitToBeTold: while telling
// a collection's jobs takes long (here the worker's updates to its jobs
// are held, as a burst holds their workflow tasks), a client may disable
// and enable the collection more times than Temporal lets a workflow have
// updates in flight (10): each answers 202 at once, and each Location
// answers 200 once the jobs are told, which show the last state asked.
func TestCollectionOperationsAnswerWhileTheirJobsWaitToBeTold(t *testing.T) {
	st := newStackWith(t, recurtest.Config{Plain: true})
	a := tenantAPI{st.api.URL, ""}
	res := a.do(t, http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{}})
	require.Equal(t, http.StatusCreated, res.status, string(res.body))
	res = a.do(t, http.MethodPut, collectionPath+"/jobs/j1", httpJob("http://127.0.0.1:9/", map[string]any{"frequency": "Hour"}))
	require.Equal(t, http.StatusCreated, res.status, string(res.body))

	// The worker's client holds every update to the job (TellJobs) until
	// release.
	job := jobs.Key{Subscription: "sub1", ResourceGroup: "rg1", Collection: "coll1", Job: "j1"}.JobWorkflowID()
	release := make(chan struct{})
	var releaseOnce sync.Once
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })
	held := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if u, ok := req.(*workflowservice.UpdateWorkflowExecutionRequest); ok && u.GetWorkflowExecution().GetWorkflowId() == job {
			select {
			case <-release:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	c, err := client.Dial(client.Options{HostPort: st.temporal.GetFrontendHostPort(), Namespace: st.temporal.GetDefaultNamespace(),
		ConnectionOptions: client.ConnectionOptions{DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(held)}}})
	require.NoError(t, err)
	defer c.Close()
	st.recur.StopWorkers()
	w, err := st.recur.StartWorker(c)
	require.NoError(t, err)
	defer w.Stop()

	const operations = 12 // more than history.maxInFlightUpdates
	var locations []string
	for i := range operations {
		op := "/disable"
		if i%2 == 1 {
			op = "/enable"
		}
		res := a.do(t, http.MethodPost, collectionPath+op, nil)
		require.Equal(t, http.StatusAccepted, res.status, "operation %d (%s): %s", i+1, op, res.body)
		locations = append(locations, res.header.Get("Location"))
	}
	// None can end while its jobs wait to be told.
	res = a.do(t, http.MethodGet, strings.TrimPrefix(locations[0], st.api.URL), nil)
	require.Equal(t, http.StatusAccepted, res.status, string(res.body))

	releaseOnce.Do(func() { close(release) })
	for i, loc := range locations {
		op := strings.TrimPrefix(loc, st.api.URL)
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
			res := a.do(t, http.MethodGet, op, nil)
			if res.status != http.StatusAccepted {
				require.Equal(t, http.StatusOK, res.status, "operation %d: %s", i+1, res.body)
				break
			}
			require.True(t, time.Now().Before(deadline), "operation %d still runs after a minute", i+1)
		}
	}
	res = a.do(t, http.MethodGet, collectionPath+"/jobs/j1", nil)
	require.Equal(t, "enabled", path(res.json(t), "properties", "state"), "the last operation enabled the collection")
}
