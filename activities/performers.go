package activities

import (
	"context"

	"github.com/recurhq/recur/jobs"
)

// Performer is the activity that performs an action type other than Http
// and Https: the name worker.Register registers it under and the job
// workflow schedules it by, and the method a first attempt calls in place.
type Performer struct {
	Name    string
	perform func(*Activities, context.Context, jobs.ActionInput) (jobs.HTTPResponse, error)
}

// performers are the performers of the action types other than Http and
// Https, by type: the one place a new type is added, read by the job
// workflow's dispatch and by FirstAttempt's.
var performers = map[string]Performer{
	jobs.ActionStorageQueue:    {"StorageQueue", (*Activities).StorageQueue},
	jobs.ActionServiceBusQueue: {"ServiceBus", (*Activities).ServiceBus},
	jobs.ActionServiceBusTopic: {"ServiceBus", (*Activities).ServiceBus},
	jobs.ActionWorkflow:        {"StartWorkflow", (*Activities).StartWorkflow},
}

// PerformerOf returns the performer of the action type typ, false for
// Http, Https and a type recur does not know.
func PerformerOf(typ string) (Performer, bool) {
	p, ok := performers[typ]
	return p, ok
}
