package workflows

import "github.com/recurhq/recur/jobs"

// startedDefined takes what the API started a new job's workflow with
// (lifecycle.NewState): its collection's admission, which the API took before
// the start, and the memo the start wrote, which the job's first flush
// then leaves as it is. The API starts the workflow before the
// admission's Until, less twice the margin by its own clock: the
// collection, which looks at the name at Until, finds the job running
// and defined.
func (j *job) startedDefined(adm jobs.Admission) {
	a := &j.admission
	a.admitted, a.took, a.lease = true, adm.Gen, adm.Lease
	a.heard(adm.Terms)
	view, status := j.state().Views(false)
	j.memo.job, _ = changed(view, nil)
	j.memo.status, _ = changed(status, nil)
}
