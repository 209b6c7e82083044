package store

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/recurhq/recur/jobs"
)

func TestJobsQuery(t *testing.T) {
	k := jobs.Key{Subscription: "sub1", ResourceGroup: "rg1", Collection: "coll1", Job: "ignored"}
	assert.Equal(t, "WorkflowId BETWEEN 'job:sub1/rg1/coll1/a' AND 'job:sub1/rg1/coll1/c' AND ExecutionStatus = 'Running'",
		jobsQuery(k, []string{"a", "b", "c"}, JobFilter{}))
	assert.Equal(t, "WorkflowId BETWEEN 'job:sub1/rg1/coll1/a' AND 'job:sub1/rg1/coll1/a' AND ExecutionStatus = 'Running' AND RecurState = 'Disabled'",
		jobsQuery(k, []string{"a"}, JobFilter{State: "Disabled"}))
	assert.Equal(t, "RecurKind = 'collection' AND RecurSubscription = 'it\\'s' AND ExecutionStatus = 'Running'",
		jobs.ScopeQuery(jobs.KindCollection, jobs.Key{Subscription: "it's"}, running))
}
