package temporalserver_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/internal/recurproc"
	"github.com/recurhq/recur/temporalserver"
)

// benchStatus is the search attribute the bench workflow sets, as recur's
// run workflow sets RecurStatus.
var benchStatus = temporal.NewSearchAttributeKeyKeyword("BenchStatus")

// benchWorkflow has the shape of a recur run: one activity, then a memo
// and a search attribute upsert.
func benchWorkflow(ctx workflow.Context) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	if err := workflow.ExecuteActivity(ctx, benchActivity).Get(ctx, nil); err != nil {
		return err
	}
	if err := workflow.UpsertMemo(ctx, map[string]any{"rows": "done"}); err != nil {
		return err
	}
	return workflow.UpsertTypedSearchAttributes(ctx, benchStatus.ValueSet("Succeeded"))
}

func benchActivity(context.Context) error { return nil }

// BenchmarkWorkflowThroughput runs b.N workflows of a run's shape, 32 at
// a time, on the embedded server, with each Sync setting: the figure is
// what the SQLite settings cost a whole workflow, end to end (ns/op is
// wall time per workflow; cpu-ms/op is the process's CPU per workflow).
//
//	go test -run '^$' -bench WorkflowThroughput -benchtime 2000x ./temporalserver/
func BenchmarkWorkflowThroughput(b *testing.B) {
	for _, mode := range []temporalserver.Sync{temporalserver.SyncFull, temporalserver.SyncNormal} {
		b.Run("sync="+string(mode), func(b *testing.B) { benchThroughput(b, mode) })
	}
}

func benchThroughput(b *testing.B, mode temporalserver.Sync) {
	ctx, cancel := context.WithTimeout(b.Context(), 10*time.Minute)
	defer cancel()
	s, err := temporalserver.Start(ctx, temporalserver.Config{
		DataDir:          b.TempDir(),
		FrontendPort:     freePort(b),
		Sync:             mode,
		SearchAttributes: map[string]enumspb.IndexedValueType{benchStatus.GetName(): enumspb.INDEXED_VALUE_TYPE_KEYWORD},
		Logger:           slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Stop()
	c, err := client.Dial(client.Options{HostPort: s.FrontendAddress(), Namespace: s.Namespace()})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	w := worker.New(c, "bench", worker.Options{})
	w.RegisterWorkflow(benchWorkflow)
	w.RegisterActivity(benchActivity)
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	defer w.Stop()

	const concurrency = 32
	ids := make(chan int)
	errs := make(chan error, concurrency)
	var wg sync.WaitGroup
	cpu := recurproc.CPUOf(os.Getpid())
	b.ResetTimer()
	for range concurrency {
		wg.Go(func() {
			for i := range ids {
				run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
					ID: fmt.Sprintf("bench-%d", i), TaskQueue: "bench"}, benchWorkflow)
				if err == nil {
					err = run.Get(ctx, nil)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for i := range b.N {
		ids <- i
	}
	close(ids)
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64((recurproc.CPUOf(os.Getpid())-cpu).Milliseconds())/float64(b.N), "cpu-ms/op")
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
}
