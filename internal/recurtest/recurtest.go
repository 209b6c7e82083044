// Package recurtest runs a whole recur in process for tests and tools: a
// Temporal server (temporaltest), recur's search attributes, a worker with
// recur's workflows and activities, and the REST API behind httptest.
package recurtest

import (
	"context"
	"fmt"
	"net/http/httptest"
	"time"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/server/temporaltest"

	"github.com/recurhq/recur/activities"
	"github.com/recurhq/recur/api"
	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/temporalserver"
	recurworker "github.com/recurhq/recur/worker"
)

// Stack is a running recur.
type Stack struct {
	Temporal *temporaltest.TestServer
	API      *httptest.Server
}

// Start starts a stack; opts configure its activities (the endpoints of
// emulators, say). The caller stops it.
func Start(opts ...func(*activities.Activities)) (*Stack, error) {
	ts := temporaltest.NewServer()
	c := ts.GetDefaultClient()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := temporalserver.RegisterSearchAttributes(ctx, c, ts.GetDefaultNamespace(), jobs.SearchAttributeTypes()); err != nil {
		ts.Stop()
		return nil, fmt.Errorf("register search attributes: %w", err)
	}
	ts.NewWorker(jobs.TaskQueue, func(r worker.Registry) {
		acts := activities.New()
		acts.Temporal = c
		for _, opt := range opts {
			opt(acts)
		}
		recurworker.Register(r, acts)
	})
	return &Stack{Temporal: ts, API: httptest.NewServer(api.New(c, api.Options{Namespace: ts.GetDefaultNamespace()}))}, nil
}

// Stop stops the API and the server.
func (s *Stack) Stop() {
	s.API.Close()
	s.Temporal.Stop()
}
