// Package store is how recur's API reads and writes jobs and collections
// in Temporal: the public views in the workflows' memos (decoded once per
// payload, read raw from list responses), visibility queries and their
// paging, the updates, starts and history reads of the job and collection
// workflows, the admission of new jobs by their collections, and the
// caches all of that keeps. It knows no HTTP: what it refuses is a
// jobs.Error or an error of Temporal's, which the API maps to an answer.
// It talks to Temporal only through the client, by workflow, update and
// query names.
package store

import (
	"cmp"
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
)

// RequestTimeout bounds the calls to Temporal of each request; the work a
// request leaves behind (a batch of admissions on its way, a job undone)
// has as long.
const RequestTimeout = 30 * time.Second

// Options configure a Store.
type Options struct {
	Namespace string
	Logger    *slog.Logger
	// DataConverter is the Temporal client's (with recur's codec), for the
	// payloads the store decodes itself (memos, history rows); nil is
	// Temporal's default.
	DataConverter converter.DataConverter
	// MaxCollectionsPerSubscription caps the job collections of one
	// subscription (CollectionRoom); zero is no cap.
	MaxCollectionsPerSubscription int
	// SlotWaits, if set, observes how long a new job's PUT waited for a
	// slot of its collection's lease, in seconds.
	SlotWaits prometheus.Histogram
}

// Store reads and writes jobs and collections through one Temporal
// client; it is safe for concurrent use.
type Store struct {
	temporal  client.Client
	namespace string
	log       *slog.Logger
	updates   *updateSemaphore
	priority  *writePriority // of the job workflows written to (priority.go)
	// admissions gathers the admissions of new jobs asked of each
	// collection (admit.go).
	admissions     admissions
	runs           *runs         // the running run of each workflow read or written lately (runs.go)
	decoded        *bounded[any] // memo values by the payload they were decoded from (decoded.go)
	converter      converter.DataConverter
	slotWaits      prometheus.Histogram // nil without Options.SlotWaits
	maxCollections int                  // per subscription; 0 for no cap
	skewWarned     atomic.Int64         // when noteSkew last warned, in Unix nanoseconds
}

// New returns a Store that talks to Temporal through c.
func New(c client.Client, opts Options) *Store {
	s := &Store{temporal: c, namespace: opts.Namespace, log: cmp.Or(opts.Logger, slog.Default()),
		updates: newUpdateSemaphore(), runs: newRuns(maxRuns), decoded: newBounded[any](maxDecoded),
		converter: opts.DataConverter, slotWaits: opts.SlotWaits, maxCollections: opts.MaxCollectionsPerSubscription}
	s.priority = newWritePriority(s)
	return s
}

// CheckHealth returns nil when Temporal's frontend answers.
func (s *Store) CheckHealth(ctx context.Context) error {
	_, err := s.temporal.CheckHealth(ctx, &client.CheckHealthRequest{})
	return err
}

// DescribeNamespace returns nil when the store's namespace exists.
func (s *Store) DescribeNamespace(ctx context.Context) error {
	_, err := s.temporal.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: s.namespace})
	return err
}
