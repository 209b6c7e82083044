package jobs

import (
	"fmt"
	"regexp"
	"time"
)

// Key names a job collection, or a job in one, the way Azure's resource
// paths do.
type Key struct {
	Subscription  string `json:"subscription"`
	ResourceGroup string `json:"resourceGroup"`
	Collection    string `json:"collection"`
	Job           string `json:"job,omitempty"`
}

// CollectionKey returns the key of k's collection.
func (k Key) CollectionKey() Key { k.Job = ""; return k }

// CollectionID returns the ARM resource ID of k's collection.
func (k Key) CollectionID() string {
	return fmt.Sprintf("/subscriptions/%s/resourceGroups/%s/providers/Microsoft.Scheduler/jobCollections/%s",
		k.Subscription, k.ResourceGroup, k.Collection)
}

// JobID returns the ARM resource ID of k's job.
func (k Key) JobID() string { return k.CollectionID() + "/jobs/" + k.Job }

// CollectionWorkflowID is the ID of the workflow that owns k's collection.
func (k Key) CollectionWorkflowID() string {
	return fmt.Sprintf("collection:%s/%s/%s", k.Subscription, k.ResourceGroup, k.Collection)
}

// JobWorkflowID is the ID of the workflow that runs k's job.
func (k Key) JobWorkflowID() string {
	return fmt.Sprintf("job:%s/%s/%s/%s", k.Subscription, k.ResourceGroup, k.Collection, k.Job)
}

// OccurrenceID identifies one occurrence of a job: the job workflow's ID,
// "@", and the nominal time in RFC 3339 UTC. It is the idempotency key of
// every outbound call the occurrence makes, so that a target can drop the
// repeats a restart may cause; the job handles each nominal time once
// (JobState.Handled).
func OccurrenceID(jobWorkflowID string, nominal time.Time) string {
	return jobWorkflowID + "@" + nominal.UTC().Format(time.RFC3339Nano)
}

// names are Azure's resource names: letters, digits, hyphens and
// underscores, starting with a letter or digit. They become parts of
// workflow IDs, so "/", ":" and "@" must never appear in them.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$`)

// Validate checks every part of k that is set.
func (k Key) Validate() error {
	for _, part := range []struct{ what, value string }{
		{"subscriptionId", k.Subscription},
		{"resourceGroupName", k.ResourceGroup},
		{"jobCollectionName", k.Collection},
		{"jobName", k.Job},
	} {
		if part.value == "" && part.what == "jobName" {
			continue
		}
		if !namePattern.MatchString(part.value) {
			return &Error{Code: CodeInvalidName, Target: part.what,
				Message: fmt.Sprintf("%s %q must be 1 to 100 letters, digits, '-', '_' or '.', starting with a letter or digit", part.what, shortened(part.value))}
		}
	}
	return nil
}

// shortened cuts a name that is far too long to quote whole in an error
// message: the answer to a bad name is not a copy of it.
func shortened(name string) string {
	const keep = 120
	if len(name) <= keep {
		return name
	}
	return name[:keep] + "..."
}
