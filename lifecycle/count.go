package lifecycle

import (
	"fmt"
	"time"

	"github.com/recurhq/recur/jobs"
)

// count applies a run that ended to the status (docs/architecture.md,
// "Failure semantics": executionCount counts runs, failureCount failed
// attempts, faultedCount runs whose main action failed after all retries)
// and to the job's health, records its rows, and faults or disables the
// job when its rules say.
func (j *Job) count(e Ended, out []Effect) []Effect {
	j.local.outcome = e.Result.Status
	st := j.status()
	st.ExecutionCount++
	st.LastExecutionTime = &e.Started
	st.FailureCount += e.Result.FailedAttempts
	if e.Result.Faulted {
		j.fault(e)
	} else {
		j.state.ConsecutiveFaults = 0
	}
	// After fault: a run that reaches both maxConsecutiveFaults and
	// disableAfterFailures faults the job, which is final.
	j.countHealth(e)
	return append(out, Record{Rows: e.Rows, Failure: e.Failure})
}

// fault counts a run whose main action failed after all its retries, and
// faults the job when it was the one run of a one-time job, or the
// maxConsecutiveFaults-th of a recurring job in a row.
func (j *Job) fault(e Ended) {
	j.status().FaultedCount++
	j.state.ConsecutiveFaults++
	p := &j.state.Job.Properties
	switch {
	case e.Kind != Scheduled:
	case p.Recurrence == nil:
		p.State, p.StateReason = jobs.Faulted, "its one run failed after its retries"
		j.revise()
		j.setNext(nil)
	case p.MaxConsecutiveFaults > 0 && j.state.ConsecutiveFaults >= p.MaxConsecutiveFaults:
		p.State = jobs.Faulted
		p.StateReason = fmt.Sprintf("%d runs in a row failed after their retries (maxConsecutiveFaults)", j.state.ConsecutiveFaults)
		j.revise()
		j.setNext(nil)
	}
}

// A job's health (jobs.Status's extensions) changes where its counters
// do, when a run ends (countHealth) or an occurrence is not run
// (countNotRun).

// countHealth applies a run that ended to the job's health: its failure
// streak, its last success and, for a scheduled run, its lateness. A
// streak that reaches disableAfterFailures disables an enabled job.
func (j *Job) countHealth(e Ended) {
	st := j.status()
	if e.Kind == Scheduled {
		st.LastLateness = jobs.DurationOf(e.Lateness())
	}
	if !e.Result.Faulted {
		started := e.Started
		st.LastSuccessTime = &started
		j.restartStreak()
		return
	}
	st.ConsecutiveFailures++
	if j.state.FailingSince == nil {
		since := e.Started.UTC().Truncate(time.Second)
		j.state.FailingSince = &since
	}
	p := &j.state.Job.Properties
	if n := p.DisableAfterFailures; n > 0 && st.ConsecutiveFailures >= n && p.State == jobs.Enabled {
		j.disable(jobs.FailuresReason(st.ConsecutiveFailures, e.Result.Message))
	}
}

// restartStreak ends the job's failure streak: a run succeeded, or the
// job was enabled.
func (j *Job) restartStreak() {
	j.status().ConsecutiveFailures = 0
	j.state.FailingSince = nil
}

// countNotRun counts an occurrence recorded as Postponed, for why, and
// keeps the latest such occurrence's nominal time.
func (j *Job) countNotRun(nominal time.Time, why Why) {
	st := j.status()
	if why == Missed {
		st.MissedCount++
	} else {
		st.PostponedCount++
	}
	j.notRunAt(nominal)
}

// countSkipped counts the n missed occurrences a catch-up does not list,
// the latest at last (nil in a plan recorded before it was kept).
func (j *Job) countSkipped(n int, last *time.Time) {
	j.status().MissedCount += n
	if last != nil {
		j.notRunAt(*last)
	}
}

// notRunAt keeps the nominal time of the latest occurrence not run.
func (j *Job) notRunAt(nominal time.Time) {
	if st := j.status(); st.LastMissedTime == nil || nominal.After(*st.LastMissedTime) {
		st.LastMissedTime = &nominal
	}
}
