package store

import (
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/recurhq/recur/jobs"
)

// collectionStart returns the options that start k's collection workflow:
// its ID, search attributes and the summary the Web UI and the temporal
// CLI show (jobs.CollectionSummary; no secret in it).
func collectionStart(k jobs.Key) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                    k.CollectionWorkflowID(),
		Priority:              temporal.Priority{PriorityKey: priorityWrite},
		TypedSearchAttributes: k.SearchAttributes(jobs.KindCollection),
		StaticSummary:         jobs.CollectionSummary(k),
		StaticDetails:         "Azure Scheduler job collection `" + k.CollectionID() + "`",
	}
}

// jobStart returns the options that start k's job workflow with job as
// its first definition. Temporal keeps the summary for this run of the
// workflow only: a later PUT does not change it, and a continue-as-new
// drops it; the workflow's current details always show the job as it is.
func jobStart(k jobs.Key, job jobs.Job) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                    k.JobWorkflowID(),
		TypedSearchAttributes: k.SearchAttributes(jobs.KindJob),
		StaticSummary:         jobs.JobSummary(k, job),
		StaticDetails: "Azure Scheduler job `" + k.JobID() + "`.\n\n" +
			"The summary is the definition this workflow started with; its current details show the job as it is now.",
	}
}
