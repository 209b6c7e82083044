package jobs

import "time"

// AcceptStored is what a definition stored before a rule of Accept's was
// made still meets: the tests that stored definitions keep working (their
// summaries, their runs) make theirs with it.
func (j *Job) AcceptStored(k Key, created time.Time) error { return j.normalize(k, created) }
