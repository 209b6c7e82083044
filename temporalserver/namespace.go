package temporalserver

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"go.temporal.io/api/enums/v1"
	namespacepb "go.temporal.io/api/namespace/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/types/known/durationpb"
)

// ensureNamespace sets the retention of a namespace that prepareDatabase
// found already there, when it differs from the configured one.
func ensureNamespace(ctx context.Context, c client.Client, namespace string, retention time.Duration) error {
	desc, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: namespace})
	if err != nil {
		return fmt.Errorf("describe namespace %s: %w", namespace, err)
	}
	if desc.GetConfig().GetWorkflowExecutionRetentionTtl().AsDuration() == retention {
		return nil
	}
	_, err = c.WorkflowService().UpdateNamespace(ctx, &workflowservice.UpdateNamespaceRequest{
		Namespace: namespace,
		Config:    &namespacepb.NamespaceConfig{WorkflowExecutionRetentionTtl: durationpb.New(retention)},
	})
	if err != nil {
		return fmt.Errorf("set retention of namespace %s to %v: %w", namespace, retention, err)
	}
	return nil
}

// RegisterSearchAttributes registers the custom search attributes that the
// namespace lacks and waits until all of them are listed. One that exists
// with another type is an error: its values could not be stored. It works
// against any Temporal cluster whose client may call the operator service;
// recur serve uses it on external clusters too.
func RegisterSearchAttributes(ctx context.Context, c client.Client, namespace string, want map[string]enums.IndexedValueType) error {
	missing, err := missingSearchAttributes(ctx, c, namespace, want)
	if err != nil || len(missing) == 0 {
		return err
	}
	return addSearchAttributes(ctx, c, namespace, missing)
}

// addSearchAttributes registers missing, attributes the namespace lacks,
// and waits until all of them are listed.
func addSearchAttributes(ctx context.Context, c client.Client, namespace string, missing map[string]enums.IndexedValueType) error {
	_, err := c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace:        namespace,
		SearchAttributes: missing,
	})
	if err != nil {
		return fmt.Errorf("add search attributes %v: %w", slices.Sorted(maps.Keys(missing)), err)
	}
	// The new aliases live in the namespace, which other services see after
	// their namespace cache refreshes (every few seconds).
	for {
		have, err := customSearchAttributes(ctx, c, namespace)
		if err != nil {
			return err
		}
		if hasAll(have, missing) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for search attributes %v: %w", slices.Sorted(maps.Keys(missing)), ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// missingSearchAttributes returns the attributes of want the namespace
// lacks; one it has with another type is an error: its values could not
// be stored.
func missingSearchAttributes(ctx context.Context, c client.Client, namespace string, want map[string]enums.IndexedValueType) (map[string]enums.IndexedValueType, error) {
	if len(want) == 0 {
		return nil, nil
	}
	have, err := customSearchAttributes(ctx, c, namespace)
	if err != nil {
		return nil, err
	}
	missing := map[string]enums.IndexedValueType{}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		typ, ok := have[name]
		switch {
		case !ok:
			missing[name] = want[name]
		case typ != want[name]:
			return nil, fmt.Errorf("search attribute %s exists with type %v, not %v", name, typ, want[name])
		}
	}
	return missing, nil
}

// SearchAttributesUsable succeeds once the namespace accepts a visibility
// query naming every attribute of want. Registered attributes are listed
// at once, but the frontend maps their names through its namespace cache,
// which learns of them at its next refresh (every 10 s by default): until
// then, a workflow started with them fails with "no mapping defined for
// search attribute". The query meets the same mapping.
func SearchAttributesUsable(ctx context.Context, c client.Client, namespace string, want map[string]enums.IndexedValueType) error {
	if len(want) == 0 {
		return nil
	}
	terms := make([]string, 0, len(want))
	for _, name := range slices.Sorted(maps.Keys(want)) {
		terms = append(terms, name+" = "+zeroLiteral(want[name]))
	}
	_, err := c.WorkflowService().ListWorkflowExecutions(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Namespace: namespace,
		PageSize:  1,
		Query:     strings.Join(terms, " AND "),
	})
	if err != nil {
		return fmt.Errorf("query namespace %s by recur's search attributes: %w", namespace, err)
	}
	return nil
}

// zeroLiteral is a value of type typ in the visibility query language.
func zeroLiteral(typ enums.IndexedValueType) string {
	switch typ {
	case enums.INDEXED_VALUE_TYPE_INT, enums.INDEXED_VALUE_TYPE_DOUBLE:
		return "0"
	case enums.INDEXED_VALUE_TYPE_BOOL:
		return "false"
	case enums.INDEXED_VALUE_TYPE_DATETIME:
		return "'1970-01-01T00:00:00Z'"
	default:
		return "''"
	}
}

func customSearchAttributes(ctx context.Context, c client.Client, namespace string) (map[string]enums.IndexedValueType, error) {
	resp, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return nil, fmt.Errorf("list search attributes of namespace %s: %w", namespace, err)
	}
	return resp.GetCustomAttributes(), nil
}

func hasAll(have, want map[string]enums.IndexedValueType) bool {
	for name, typ := range want {
		if have[name] != typ {
			return false
		}
	}
	return true
}
