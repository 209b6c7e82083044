package worker

import (
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/jobs"
)

// CollectionLabel returns the interceptor that labels what a job's or a
// collection's workflow emits through workflow.GetMetricsHandler with its
// collection (jobs.MetricCollectionLabel), for a worker whose operator
// opted in: the series then count per collection, never per job. The
// SDK's own series (task latencies, polls) are emitted past the
// interceptor and stay unlabelled.
func CollectionLabel() interceptor.WorkerInterceptor { return &collectionLabel{} }

type collectionLabel struct {
	interceptor.WorkerInterceptorBase
}

func (*collectionLabel) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	i := &collectionLabelInbound{}
	i.Next = next
	return i
}

type collectionLabelInbound struct {
	interceptor.WorkflowInboundInterceptorBase
}

func (i *collectionLabelInbound) Init(outbound interceptor.WorkflowOutboundInterceptor) error {
	o := &collectionLabelOutbound{}
	o.Next = outbound
	return i.Next.Init(o)
}

// collectionLabelOutbound keeps its workflow's label: the interceptor
// lives as long as its workflow's execution, whose ID does not change.
type collectionLabelOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
	label map[string]string // nil until the first call; empty for a workflow of neither kind
}

func (o *collectionLabelOutbound) GetMetricsHandler(ctx workflow.Context) client.MetricsHandler {
	h := o.Next.GetMetricsHandler(ctx)
	if o.label == nil {
		o.label = map[string]string{}
		if k, ok := jobs.KeyOfWorkflowID(workflow.GetInfo(ctx).WorkflowExecution.ID); ok {
			o.label[jobs.MetricCollectionLabel] = k.MetricCollection()
		}
	}
	if len(o.label) == 0 {
		return h
	}
	return h.WithTags(o.label)
}
