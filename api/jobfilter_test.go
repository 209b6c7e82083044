package api

import (
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/store"
)

var filterNow = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func TestParseJobFilter(t *testing.T) {
	at := func(s string) *time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		require.NoError(t, err)
		return &v
	}
	dur := func(d time.Duration) *time.Duration { return &d }
	for raw, want := range map[string]store.JobFilter{
		"":                           {},
		"state eq 'Enabled'":         {State: "Enabled"},
		"consecutiveFailures ge 3":   {Failures: 3},
		"CONSECUTIVEFAILURES GT 3":   {Failures: 4},
		"consecutiveFailures ge '0'": {},
		"lastSuccessTime lt 2026-11-20T00:00:00Z":     {SuccessBefore: at("2026-11-20T00:00:00Z")},
		"lastSuccessTime le '2026-11-20T00:00:00Z'":   {SuccessBefore: at("2026-11-20T00:00:00.000000001Z")},
		"lastLateness gt duration'PT5M'":              {LateFrom: dur(5*time.Minute + 1)},
		"lastLateness ge PT5M":                        {LateFrom: dur(5 * time.Minute)},
		"lastLateness gt '00:00:30'":                  {LateFrom: dur(30*time.Second + 1)},
		"lastMissedTime ge 2026-11-20T12:00:00+01:00": {MissedSince: at("2026-11-20T11:00:00Z")},
		"lastMissedTime gt 2026-11-20T11:00:00Z":      {MissedSince: at("2026-11-20T11:00:00.000000001Z")},
		"unhealthy":                                   {Unhealthy: true},
		"Unhealthy eq true":                           {Unhealthy: true},
		"state eq disabled and consecutiveFailures ge 2 and lastMissedTime ge 2026-11-20T00:00:00Z": {
			State: "Disabled", Failures: 2, MissedSince: at("2026-11-20T00:00:00Z")},
	} {
		got, err := parseJobFilter(raw, filterNow)
		require.NoError(t, err, raw)
		want.Now = filterNow
		assert.Equal(t, want, got, raw)
	}
	for raw, why := range map[string]string{
		"state eq Running":                                      "state takes eq",
		"state ne 'Enabled'":                                    "state takes eq",
		"consecutiveFailures eq 3":                              "consecutiveFailures takes ge or gt, not eq",
		"consecutiveFailures ge -1":                             "a whole number",
		"consecutiveFailures ge 99999999999":                    "a whole number",
		"consecutiveFailures ge three":                          "a whole number",
		"lastSuccessTime gt 2026-11-20T00:00:00Z":               "lastSuccessTime takes lt or le",
		"lastSuccessTime lt yesterday":                          "an RFC 3339 date-time",
		"lastLateness lt duration'PT5M'":                        "lastLateness takes gt or ge",
		"lastLateness gt 5m":                                    "a duration such as duration'PT5M'",
		"lastMissedTime lt 2026-11-20T00:00:00Z":                "lastMissedTime takes ge or gt",
		"unhealthy eq false":                                    "unhealthy stands alone",
		"executionCount gt 3":                                   "executionCount cannot be filtered on",
		"state eq 'Enabled' or state eq 'Disabled'":             "a condition is <name> <operator> <value>",
		"state eq 'Enabled' and":                                "it ends with and",
		"and state eq 'Enabled'":                                "and joins two conditions",
		"unhealthy and unhealthy":                               "unhealthy is given twice",
		"consecutiveFailures ge 1 and consecutiveFailures ge 2": "given twice",
	} {
		_, err := parseJobFilter(raw, filterNow)
		var apiErr *apiError
		require.ErrorAs(t, err, &apiErr, raw)
		assert.Equal(t, codeInvalidFilter, apiErr.code, raw)
		assert.Equal(t, "$filter", apiErr.target, raw)
		assert.Contains(t, apiErr.message, why, raw)
		assert.Contains(t, apiErr.message, "consecutiveFailures ge <n>", "%s: the message says what $filter takes", raw)
	}
}

// TestJobFilterConditions: each health condition narrows the visibility
// query by the attribute that holds it coarsely, lastSuccessTime by none.
func TestJobFilterConditions(t *testing.T) {
	for raw, want := range map[string][]string{
		"":                         nil,
		"state eq enabled":         {"RecurState = 'Enabled'"},
		"consecutiveFailures ge 0": nil,
		"consecutiveFailures ge 3": {"RecurFailingSince IS NOT NULL"},
		"lastSuccessTime lt 2026-11-20T00:00:00Z": nil,
		"lastLateness gt PT30S":                   nil,
		"lastLateness ge PT1M":                    {"RecurLateness IN ('PT1M', 'PT10M', 'PT1H', 'P1D')"},
		"lastLateness gt PT1M":                    {"RecurLateness IN ('PT1M', 'PT10M', 'PT1H', 'P1D')"},
		"lastLateness gt PT10M":                   {"RecurLateness IN ('PT10M', 'PT1H', 'P1D')"},
		"lastLateness gt P2D":                     {"RecurLateness IN ('P1D')"},
		"lastMissedTime ge 2026-11-20T12:00:00Z":  {"RecurLastMissed >= '2026-11-20T11:00:00Z'"},
		"unhealthy": {"(RecurFailingSince IS NOT NULL OR RecurLateness IN ('PT1M', 'PT10M', 'PT1H', 'P1D') OR " +
			"RecurLastMissed >= '2026-11-20T11:00:00Z')"},
		"state eq faulted and consecutiveFailures gt 0": {"RecurState = 'Faulted'", "RecurFailingSince IS NOT NULL"},
	} {
		f, err := parseJobFilter(raw, filterNow)
		require.NoError(t, err, raw)
		assert.Equal(t, want, f.Conditions(), raw)
		assert.Equal(t, len(want) > 0, f.Narrows(), raw)
	}
}

func TestJobFilterKeepsByTheMemosExactValues(t *testing.T) {
	at := func(d time.Duration) *time.Time { v := filterNow.Add(d); return &v }
	view := func(st jobs.Status) jobs.JobView {
		return jobs.JobView{Job: jobs.Job{Properties: jobs.Properties{State: jobs.Enabled, Status: &st}}}
	}
	healthy := view(jobs.Status{ExecutionCount: 9, LastSuccessTime: at(-time.Minute), LastLateness: jobs.DurationOf(40 * time.Millisecond)})
	failing := view(jobs.Status{ConsecutiveFailures: 2, LastSuccessTime: at(-3 * time.Hour)})
	never := view(jobs.Status{})
	late := view(jobs.Status{LastSuccessTime: at(-time.Minute), LastLateness: jobs.DurationOf(5 * time.Minute)})
	barelyLate := view(jobs.Status{LastLateness: jobs.DurationOf(time.Minute)})
	missedToday := view(jobs.Status{LastSuccessTime: at(-time.Minute), MissedCount: 1, LastMissedTime: at(-2 * time.Hour)})
	missedLastWeek := view(jobs.Status{LastSuccessTime: at(-time.Minute), PostponedCount: 1, LastMissedTime: at(-7 * 24 * time.Hour)})
	disabled := failing
	disabled.Job.Properties.State = jobs.Disabled
	all := map[string]jobs.JobView{"healthy": healthy, "failing": failing, "never": never, "late": late, "barelyLate": barelyLate,
		"missedToday": missedToday, "missedLastWeek": missedLastWeek, "disabled": disabled}
	for raw, want := range map[string][]string{
		"":                         {"barelyLate", "disabled", "failing", "healthy", "late", "missedLastWeek", "missedToday", "never"},
		"consecutiveFailures ge 2": {"disabled", "failing"},
		"consecutiveFailures gt 2": nil,
		"state eq enabled and consecutiveFailures ge 1": {"failing"},
		"lastSuccessTime lt 2026-11-21T11:00:00Z":       {"barelyLate", "disabled", "failing", "never"},
		"lastLateness gt PT1M":                          {"late"},
		"lastLateness ge PT1M":                          {"barelyLate", "late"},
		"lastLateness gt PT0.04S":                       {"barelyLate", "late"},
		"lastMissedTime ge 2026-11-21T00:00:00Z":        {"missedToday"},
		"unhealthy":                                     {"barelyLate", "disabled", "failing", "late", "missedToday"},
	} {
		f, err := parseJobFilter(raw, filterNow)
		require.NoError(t, err, raw)
		var got []string
		for name, v := range all {
			if f.Keep(v) {
				got = append(got, name)
			}
		}
		slices.Sort(got)
		assert.Equal(t, want, got, raw)
	}
}

// addJobIn adds a job of collection coll in rg (added before), with its
// state and status.
func (f *listFake) addJobIn(t *testing.T, rg, coll, name string, state jobs.State, st jobs.Status) {
	k := jobs.Key{Subscription: "sub1", ResourceGroup: rg, Collection: coll, Job: name}
	f.views[k.JobWorkflowID()] = jobs.JobView{Job: jobs.Job{ID: k.JobID(), Name: coll + "/" + name,
		Properties: jobs.Properties{State: state, Status: &st}}}
	f.executions = append(f.executions, execution(t, k, jobs.KindJob))
	view := f.views[k.CollectionWorkflowID()].(jobs.CollectionView)
	i, _ := slices.BinarySearch(view.Jobs, name)
	view.Jobs = slices.Insert(slices.Clone(view.Jobs), i, name)
	f.views[k.CollectionWorkflowID()] = view
}

// pages follows a list's nextLinks from target and returns the names of
// every page, one slice a page.
func pages(t *testing.T, f *listFake, target string) [][]string {
	t.Helper()
	var out [][]string
	for range 100 {
		status, body := getList(t, f, target)
		require.Equal(t, 200, status, "%s: %v", target, body)
		out = append(out, names(t, body))
		next, ok := body["nextLink"].(string)
		if !ok {
			return out
		}
		target = strings.TrimPrefix(next, "http://localhost")
	}
	t.Fatalf("%s: a hundred pages", target)
	return nil
}

// failingJobs adds 12 jobs to collection coll of rg, of which those of odd
// number fail, and returns the names of the failing ones, sorted.
func failingJobs(t *testing.T, f *listFake, rg, coll string) []string {
	var want []string
	for i := range 12 {
		name := "j" + string(rune('a'+i))
		st := jobs.Status{ExecutionCount: 3}
		if i%2 == 1 {
			st.ConsecutiveFailures = i
			want = append(want, coll+"/"+name)
		}
		f.addJobIn(t, rg, coll, name, jobs.Enabled, st)
	}
	return want
}

// TestAFilteredListPagesWithoutSkippingOrRepeating: the store's
// attributes are coarse (the fake narrows nothing by them), the memo
// decides; a page that drops jobs ends at a job it shows, so its nextLink
// resumes after it, and the pages together are the list, each job once.
func TestAFilteredListPagesWithoutSkippingOrRepeating(t *testing.T) {
	f := newListFake()
	f.addCollection(t, "rg1", "coll1")
	want := failingJobs(t, f, "rg1", "coll1")
	filter := url.QueryEscape("consecutiveFailures ge 1")
	for _, top := range []string{"1", "2", "4", "100"} {
		got := pages(t, f, jobsPath+version+"&$top="+top+"&$filter="+filter)
		assert.Equal(t, want, slices.Concat(got...), "$top=%s: %v", top, got)
		for _, page := range got[:len(got)-1] {
			assert.Len(t, page, map[string]int{"1": 1, "2": 2, "4": 4, "100": 100}[top], "$top=%s: every page but the last is full", top)
		}
	}
	assert.Contains(t, f.lastQuery(), " AND RecurFailingSince IS NOT NULL")

	got := pages(t, f, jobsPath+version+"&$top=2&$skip=1&$filter="+filter)
	assert.Equal(t, want[1:], slices.Concat(got...), "$skip counts the jobs the filter keeps")
	got = pages(t, f, jobsPath+version+"&$top=2&$filter="+url.QueryEscape("consecutiveFailures ge 11"))
	assert.Equal(t, [][]string{{"coll1/jl"}}, got)
	got = pages(t, f, jobsPath+version+"&$top=2&$filter="+url.QueryEscape("consecutiveFailures ge 12"))
	assert.Equal(t, [][]string{{}}, got, "an empty list, no nextLink")
}

// TestAListAcrossCollections: GET /recur/v1/subscriptions/{s}/jobs lists
// the jobs of every collection of the subscription, sorted by resource
// group, collection and name, paged by $skiptoken; .../resourceGroups/{rg}/jobs
// those of one resource group.
func TestAListAcrossCollections(t *testing.T) {
	f := newListFake()
	var want []string
	for _, c := range []struct{ rg, coll string }{{"rg2", "alpha"}, {"rg1", "coll1"}, {"rg1", "beta"}} {
		f.addCollection(t, c.rg, c.coll)
	}
	// In the store's order, not the list's.
	rg2 := failingJobs(t, f, "rg2", "alpha")
	coll1 := failingJobs(t, f, "rg1", "coll1")
	beta := failingJobs(t, f, "rg1", "beta")
	want = slices.Concat(beta, coll1, rg2)
	gone := jobs.Key{Subscription: "sub1", ResourceGroup: "rg1", Collection: "beta", Job: "zz-gone"}
	f.views[gone.JobWorkflowID()] = jobs.JobView{Job: jobs.Job{ID: gone.JobID(), Name: "beta/zz-gone",
		Properties: jobs.Properties{Status: &jobs.Status{ConsecutiveFailures: 5}}}, Deleted: true}
	f.executions = append(f.executions, execution(t, gone, jobs.KindJob))

	const across = "/recur/v1/subscriptions/sub1/jobs"
	filter := url.QueryEscape("consecutiveFailures ge 1")
	for _, top := range []string{"1", "5", "100"} {
		got := pages(t, f, across+"?$top="+top+"&$filter="+filter)
		assert.Equal(t, want, slices.Concat(got...), "$top=%s", top)
	}
	assert.Equal(t, "RecurKind = 'job' AND RecurSubscription = 'sub1' AND ExecutionStatus = 'Running' AND RecurFailingSince IS NOT NULL",
		f.lastQuery())
	status, body := getList(t, f, across+"?$top=5&$filter="+filter)
	require.Equal(t, 200, status, body)
	assert.Equal(t, "http://localhost"+across+"?$filter="+filter+"&$skiptoken=rg1%2Fbeta%2Fjj&$top=5", body["nextLink"])

	got := pages(t, f, "/recur/v1/subscriptions/sub1/resourceGroups/rg2/jobs?$top=4&$filter="+filter)
	assert.Equal(t, rg2, slices.Concat(got...))
	assert.Contains(t, f.lastQuery(), "RecurResourceGroup = 'rg2'")
	got = pages(t, f, across+"?$top=50")
	assert.Len(t, slices.Concat(got...), 36, "every job but the deleted one, without a filter")

	for _, target := range []string{across + "?$skiptoken=rg1/beta", across + "?$skiptoken=rg1/beta/-x", across + "?$filter=state%20eq%20x",
		across + "?$top=0", "/recur/v1/subscriptions/bad%20sub/jobs"} {
		status, body := getList(t, f, target)
		assert.Equal(t, 400, status, "%s: %v", target, body)
	}
}
