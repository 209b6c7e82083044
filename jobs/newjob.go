package jobs

import (
	"time"

	"github.com/recurhq/recur/recurrence"
)

// AdmissionMargin is how long before an Admission's Until a job stops
// taking it: the collection's clock, the job's and the API's are not
// always the same host's.
const AdmissionMargin = 5 * time.Second

// NewJob returns the state of a new job whose first definition, def in
// its accepted form, is planned at c: revision 1 under origin's ETags,
// its next occurrence the rule's first, disabled while its collection is.
// It is what the API starts the job's workflow with (JobInput), so that a
// new job's PUT is one workflow start whose input holds the definition,
// validated once. ok is false for a definition with no occurrence to
// come, which the job workflow completes as it takes it: the API then
// sends the PUT as an update.
func NewJob(k Key, def Job, c time.Time, origin string, collectionDisabled bool) (st *JobState, ok bool) {
	rule, err := recurrence.Compile(def.Properties.Schedule(), c)
	if err != nil {
		return nil, false
	}
	first, ok := rule.First(c)
	if !ok {
		return nil, false
	}
	p := &def.Properties
	if collectionDisabled && p.State != Disabled {
		p.State, p.StateReason = Disabled, CollectionDisabledReason(k)
	}
	p.Status = &Status{NextExecutionTime: &first}
	def.ETag = NewETag(origin, 1)
	return &JobState{Job: def, Created: c, Next: &first, Revision: 1}, true
}

// CollectionDisabledReason is the stateReason of a job its collection
// disabled.
func CollectionDisabledReason(k Key) string {
	return "job collection " + k.Collection + " was disabled"
}

// Views returns the job's public views as its memo holds them: the
// definition with its secrets redacted, and the status apart (MemoJob,
// MemoStatus).
func (st *JobState) Views(deleted bool) (JobView, StatusView) {
	job := st.Job.Redacted()
	job.Properties.Status = nil
	var status Status
	if s := st.Job.Properties.Status; s != nil {
		status = *s
	}
	return JobView{Job: job, Deleted: deleted, Created: st.Created}, StatusView{Status: status, Runs: st.Runs}
}
