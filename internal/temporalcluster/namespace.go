package temporalcluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"google.golang.org/protobuf/types/known/durationpb"
)

// probeIDs is how many workflow IDs, none of them started, readiness asks
// the history service about: enough that with a few shards each one is
// asked (32 IDs miss one of 4 shards once in 2,500 clusters).
const probeIDs = 32

// becomeReady connects to the frontend, registers the namespace unless
// registered, and waits until the namespace is usable.
func (s *Server) becomeReady(ctx context.Context, registered bool) error {
	var c client.Client
	err := waitFor(ctx, s.proc, 100*time.Millisecond, func(ctx context.Context) error {
		var err error
		c, err = client.DialContext(ctx, client.Options{
			HostPort:  s.FrontendAddress(),
			Namespace: s.namespace,
			// The SDK logs each failed attempt; the last one is the error.
			Logger: sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)),
		})
		return err
	})
	if err != nil {
		return fmt.Errorf("connect to the frontend %s: %w", s.FrontendAddress(), err)
	}
	defer c.Close()
	if !registered {
		err := waitFor(ctx, s.proc, 100*time.Millisecond, func(ctx context.Context) error {
			return s.register(ctx, c)
		})
		if err != nil {
			return fmt.Errorf("register namespace %s: %w", s.namespace, err)
		}
	}
	err = waitFor(ctx, s.proc, 100*time.Millisecond, func(ctx context.Context) error {
		return s.usable(ctx, c)
	})
	if err != nil {
		return fmt.Errorf("namespace %s usable: %w", s.namespace, err)
	}
	return nil
}

// register registers the namespace through the API, as an operator of a
// real cluster does (`temporal operator namespace create`); one that
// exists is fine.
func (s *Server) register(ctx context.Context, c client.Client) error {
	_, err := c.WorkflowService().RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
		Namespace:                        s.namespace,
		WorkflowExecutionRetentionPeriod: durationpb.New(s.retention),
	})
	var exists *serviceerror.NamespaceAlreadyExists
	var invalid *serviceerror.InvalidArgument
	switch {
	case err == nil, errors.As(err, &exists):
		return nil
	case errors.As(err, &invalid):
		return permanent{err}
	}
	return err
}

// usable succeeds once the frontend, the visibility store, matching and
// every history shard answer for the namespace: after a restart the shards
// are acquired one by one, and a call to one not yet acquired waits.
func (s *Server) usable(ctx context.Context, c client.Client) error {
	svc := c.WorkflowService()
	if _, err := svc.DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: s.namespace}); err != nil {
		return fmt.Errorf("describe namespace: %w", err)
	}
	_, err := svc.ListWorkflowExecutions(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: s.namespace, PageSize: 1})
	if err != nil {
		return fmt.Errorf("list workflows: %w", err)
	}
	_, err = svc.DescribeTaskQueue(ctx, &workflowservice.DescribeTaskQueueRequest{
		Namespace:     s.namespace,
		TaskQueue:     &taskqueuepb.TaskQueue{Name: "temporalcluster-probe", Kind: enums.TASK_QUEUE_KIND_NORMAL},
		TaskQueueType: enums.TASK_QUEUE_TYPE_WORKFLOW,
	})
	if err != nil {
		return fmt.Errorf("describe task queue: %w", err)
	}
	for i := range probeIDs {
		id := "temporalcluster-probe-" + strconv.Itoa(i)
		_, err := svc.DescribeWorkflowExecution(ctx, &workflowservice.DescribeWorkflowExecutionRequest{
			Namespace: s.namespace,
			Execution: &commonpb.WorkflowExecution{WorkflowId: id},
		})
		var notFound *serviceerror.NotFound
		if !errors.As(err, &notFound) {
			return fmt.Errorf("describe workflow %s: want not found, got %v", id, err)
		}
	}
	return nil
}

// permanent marks an error that waitFor does not retry.
type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }
