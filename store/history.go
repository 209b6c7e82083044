package store

import (
	"context"
	"fmt"
	"slices"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/recurhq/recur/jobs"
)

const (
	// maxHistoryRuns bounds the workflow runs one history request reads
	// back along a job's continue-as-new chain: at 100 occurrences a run,
	// more than the 60 days of an every-minute job.
	maxHistoryRuns = 1000
	// historyEventPage is the events of a page of a run's history: the
	// server's most (primitives.GetHistoryMaxPageSize), which it logs a
	// warning for exceeding.
	historyEventPage = 256
)

// History returns the rows of the job's occurrences of the given outcome
// ("" for any), newest first, at least want of them when there are: read
// from the job workflow's own history (jobs.MemoRows), so that it needs
// no worker. An occurrence's rows stay together, the error action's
// before the main action's since it ran later; the outcome is the status
// of its main action's row. A job that does not exist is a NotFound.
func (s *Store) History(ctx context.Context, k jobs.Key, status string, want int) ([]jobs.HistoryRow, error) {
	if _, err := s.Job(ctx, k); err != nil {
		return nil, err
	}
	// The run that read found running is the current one (runs.go).
	run, _ := s.runs.get(k.JobWorkflowID())
	return s.historyRows(ctx, k, run, status, want)
}

// historyRows returns the job's history rows of the given outcome (""
// for any), newest first, at least want of them when there are: it reads
// the job workflow's runs in reverse, from the running one (runID, or ""
// for the current one) back along the continue-as-new chain, at most
// maxHistoryRuns of them.
func (s *Store) historyRows(ctx context.Context, k jobs.Key, runID, status string, want int) ([]jobs.HistoryRow, error) {
	var rows []jobs.HistoryRow
	err := readUpserts(ctx, s, k, runID, jobs.MemoRows, func(upserted []jobs.HistoryRow) bool {
		rows = append(rows, newestFirst(upserted, status)...)
		return len(rows) < want
	})
	return rows, err
}

// readUpserts calls visit with the values of each upsert of the memo key
// of the job workflow, from the newest back, until visit returns false: it
// reads the workflow's runs in reverse, from the running one (runID, or ""
// for the current one) back along the continue-as-new chain, at most
// maxHistoryRuns of them.
func readUpserts[T any](ctx context.Context, s *Store, k jobs.Key, runID, key string, visit func([]T) bool) error {
	more := true
	for range maxHistoryRuns {
		previous, err := s.readRunMemo(ctx, k.JobWorkflowID(), runID, key, func(p *commonpb.Payload, event int64) bool {
			var values []T
			if err := s.dataConverter().FromPayload(p, &values); err != nil {
				// One unreadable upsert never hides the rest of the history.
				s.log.WarnContext(ctx, "skip an unreadable upsert", "key", key, "workflowID", k.JobWorkflowID(), "event", event, "error", err)
				return true
			}
			more = visit(values)
			return more
		})
		if err != nil {
			return fmt.Errorf("read the job's history: %w", err)
		}
		if !more || previous == "" {
			return nil
		}
		runID = previous
	}
	return nil
}

// readRunMemo reads one run of the job workflow from its last event back
// and calls visit with the payload of each upsert of the memo key, until
// visit returns false. It returns the run it continued from, "" for the
// first of its chain or when visit stopped before the run's first event.
// A run that retention already removed has no upserts.
func (s *Store) readRunMemo(ctx context.Context, workflowID, runID, key string, visit func(*commonpb.Payload, int64) bool) (previous string, err error) {
	var token []byte
	for {
		var resp *workflowservice.GetWorkflowExecutionHistoryReverseResponse
		err := retryingTransient(ctx, func() (err error) {
			resp, err = s.temporal.WorkflowService().GetWorkflowExecutionHistoryReverse(ctx, &workflowservice.GetWorkflowExecutionHistoryReverseRequest{
				Namespace:       s.namespace,
				Execution:       &commonpb.WorkflowExecution{WorkflowId: workflowID, RunId: runID},
				MaximumPageSize: historyEventPage,
				NextPageToken:   token,
			})
			return err
		})
		if WorkflowMissing(err) && runID != "" {
			return "", nil
		}
		if err != nil {
			return "", err
		}
		for _, e := range resp.GetHistory().GetEvents() {
			if started := e.GetWorkflowExecutionStartedEventAttributes(); started != nil {
				return started.GetContinuedExecutionRunId(), nil
			}
			p, ok := e.GetWorkflowPropertiesModifiedEventAttributes().GetUpsertedMemo().GetFields()[key]
			if !ok {
				continue
			}
			if !visit(p, e.GetEventId()) {
				return "", nil
			}
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			return "", nil
		}
	}
}

// newestFirst returns the rows of one upsert, in the order they were
// written (each occurrence's main action row, then its error action's),
// newest first, keeping only the occurrences whose main action has the
// given status ("" for any). An occurrence's rows stay together.
func newestFirst(rows []jobs.HistoryRow, status string) []jobs.HistoryRow {
	var out []jobs.HistoryRow
	for end := len(rows); end > 0; {
		start := end - 1
		for start > 0 && rows[start].ActionName != jobs.MainAction {
			start--
		}
		if status == "" || string(rows[start].Status) == status {
			out = append(out, rows[start:end]...)
			slices.Reverse(out[len(out)-(end-start):])
		}
		end = start
	}
	return out
}

// dataConverter decodes the payloads the store reads itself: the memos of
// the workflows are written through the worker's converter (with recur's
// codec), so they are read through the client's.
func (s *Store) dataConverter() converter.DataConverter {
	if s.converter == nil {
		return converter.GetDefaultDataConverter()
	}
	return s.converter
}
