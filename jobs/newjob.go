package jobs

import "time"

// AdmissionMargin is how long before an Admission's Until a job stops
// taking it: the collection's clock, the job's and the API's are not
// always the same host's.
const AdmissionMargin = 5 * time.Second

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
