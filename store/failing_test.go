package store

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/recurhq/recur/jobs"
)

// failingFake answers the failing gauge's queries: it lists collections,
// two a page, and counts the failing jobs of the collection a query
// names (or all).
type failingFake struct {
	client.Client
	collections []jobs.Key
	failing     map[jobs.Key]int64 // by collection key
	countErr    error

	mu      sync.Mutex
	queries []string
}

func (f *failingFake) ListWorkflow(_ context.Context, req *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error) {
	f.record(req.Query)
	start := 0
	if len(req.NextPageToken) > 0 {
		start = int(req.NextPageToken[0])
	}
	end := min(start+2, len(f.collections))
	resp := &workflowservice.ListWorkflowExecutionsResponse{}
	for _, k := range f.collections[start:end] {
		fields := map[string]*commonpb.Payload{}
		for attr, v := range map[string]string{jobs.AttrSubscription.GetName(): k.Subscription,
			jobs.AttrResourceGroup.GetName(): k.ResourceGroup, jobs.AttrCollection.GetName(): k.Collection} {
			p, err := converter.GetDefaultDataConverter().ToPayload(v)
			if err != nil {
				return nil, err
			}
			fields[attr] = p
		}
		resp.Executions = append(resp.Executions, &workflowpb.WorkflowExecutionInfo{
			Execution:        &commonpb.WorkflowExecution{WorkflowId: k.CollectionWorkflowID()},
			SearchAttributes: &commonpb.SearchAttributes{IndexedFields: fields}})
	}
	if end < len(f.collections) {
		resp.NextPageToken = []byte{byte(end)}
	}
	return resp, nil
}

func (f *failingFake) CountWorkflow(_ context.Context, req *workflowservice.CountWorkflowExecutionsRequest) (*workflowservice.CountWorkflowExecutionsResponse, error) {
	f.record(req.Query)
	if f.countErr != nil {
		return nil, f.countErr
	}
	var n int64
	for k, c := range f.failing {
		if !strings.Contains(req.Query, jobs.AttrCollection.GetName()) ||
			strings.HasSuffix(req.Query, " AND RecurSubscription = "+jobs.Quote(k.Subscription)+
				" AND RecurResourceGroup = "+jobs.Quote(k.ResourceGroup)+" AND RecurCollection = "+jobs.Quote(k.Collection)) {
			n += c
		}
	}
	return &workflowservice.CountWorkflowExecutionsResponse{Count: n}, nil
}

func (f *failingFake) record(q string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries = append(f.queries, q)
}

// gatherFailing scrapes j once and returns its series as label value (""
// without one) to value.
func gatherFailing(t *testing.T, j *countedGauge) map[string]float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	require.NoError(t, reg.Register(j))
	families, err := reg.Gather()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, f := range families {
		require.Equal(t, metricJobsFailing, f.GetName())
		for _, m := range f.GetMetric() {
			label := ""
			for _, l := range m.GetLabel() {
				require.Equal(t, jobs.MetricCollectionLabel, l.GetName())
				label = l.GetValue()
			}
			out[label] = m.GetGauge().GetValue()
		}
	}
	return out
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// TestJobsFailingCountsOnceInAll: without the collection label the gauge
// is one series, one count query of the enabled jobs whose last run
// failed, served again within its TTL without a query.
func TestJobsFailingCountsOnceInAll(t *testing.T) {
	reports := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "reports"}
	f := &failingFake{collections: []jobs.Key{reports}, failing: map[jobs.Key]int64{reports: 3}}
	j := newJobsFailing(f, "ns", false, quiet)
	require.Equal(t, map[string]float64{"": 3}, gatherFailing(t, j))
	require.Equal(t, []string{"RecurKind = 'job' AND ExecutionStatus = 'Running' AND RecurState = 'Enabled' AND RecurStatus = 'Failed'"}, f.queries)
	require.Equal(t, map[string]float64{"": 3}, gatherFailing(t, j))
	require.Len(t, f.queries, 1, "within the TTL, no query")
}

// TestJobsFailingByCollectionHasASeriesPerCollection: with the label,
// every live collection has its series, 0 included, under its own label,
// collections whose names differ only in '-', '.' and '_' too; the list
// is read page by page.
func TestJobsFailingByCollectionHasASeriesPerCollection(t *testing.T) {
	reports := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "reports"}
	dotted := jobs.Key{Subscription: "s", ResourceGroup: "rg-x", Collection: "a.b"}
	underscored := jobs.Key{Subscription: "s", ResourceGroup: "rg_x", Collection: "a_b"}
	quietOne := jobs.Key{Subscription: "t", ResourceGroup: "rg", Collection: "fine"}
	f := &failingFake{collections: []jobs.Key{reports, dotted, underscored, quietOne},
		failing: map[jobs.Key]int64{reports: 2, dotted: 1, underscored: 4}}
	j := newJobsFailing(f, "ns", true, quiet)
	require.Equal(t, map[string]float64{"s__rg__reports": 2, "s__rg_hx__a_db": 1, "s__rg_ux__a_ub": 4, "t__rg__fine": 0}, gatherFailing(t, j))
	var lists, counts int
	for _, q := range f.queries {
		if strings.HasPrefix(q, "RecurKind = 'collection'") {
			lists++
		} else {
			counts++
			require.True(t, strings.HasPrefix(q, failingQuery+" AND RecurSubscription = "), q)
		}
	}
	require.Equal(t, 2, lists, "four collections, two a page")
	require.Equal(t, 4, counts, "one count a collection")
}

// TestJobsFailingIsLeftOutWhenTemporalCannotCount: a failed count is no 0.
func TestJobsFailingIsLeftOutWhenTemporalCannotCount(t *testing.T) {
	reports := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "reports"}
	for _, byCollection := range []bool{false, true} {
		f := &failingFake{collections: []jobs.Key{reports}, countErr: errors.New("visibility unavailable")}
		require.Empty(t, gatherFailing(t, newJobsFailing(f, "ns", byCollection, quiet)), "by collection: %v", byCollection)
	}
}
