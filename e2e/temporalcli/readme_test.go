package temporalcli_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/recurhq/recur/internal/readme"
	"github.com/recurhq/recur/internal/recurtest"
	"github.com/recurhq/recur/internal/temporalcli"
	"github.com/recurhq/recur/jobs"
)

// TestReadmeRegistersSearchAttributesByHand runs the README's `temporal`
// line of its cluster section, the one an operator without recur's
// rights runs once, for each of recur's search attributes on a namespace
// that has none: afterwards the namespace lists all ten with their
// types. (cmd/recur's TestACluster runs the README's recur commands on a
// cluster whose attributes it registers through the same operator API.)
func TestReadmeRegistersSearchAttributesByHand(t *testing.T) {
	installCLI(t)
	line := readmeTemporalLine(t)
	st, err := recurtest.Start()
	require.NoError(t, err)
	t.Cleanup(st.Stop)
	address, namespace := st.Temporal.GetFrontendHostPort(), "by-hand"
	c := st.Temporal.GetDefaultClient()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	_, err = c.WorkflowService().RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
		Namespace: namespace, WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour)})
	require.NoError(t, err)

	for name, typ := range jobs.SearchAttributeTypes() {
		args := setFlag(line, "--namespace", namespace)
		args = setFlag(args, "--name", name)
		args = setFlag(args, "--type", typ.String())
		args = append(args, "--address", address)
		// A namespace just registered is unknown to the frontend until its
		// namespace cache has caught up.
		var out []byte
		require.Eventually(t, func() bool {
			out, err = temporalcli.Run(ctx, args...)
			return err == nil
		}, 30*time.Second, time.Second, "temporal %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	listed, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	require.NoError(t, err)
	for name, typ := range jobs.SearchAttributeTypes() {
		require.Equal(t, typ, listed.GetCustomAttributes()[name], "%s in namespace %s", name, namespace)
	}
}

// readmeTemporalLine returns the arguments of the `temporal` command in
// the README's cluster section.
func readmeTemporalLine(t *testing.T) []string {
	t.Helper()
	commands, err := readme.Commands("../../README.md", "Against a Temporal cluster")
	require.NoError(t, err)
	for _, words := range commands {
		if len(words) > 1 && words[0] == "temporal" {
			return words[1:]
		}
	}
	t.Fatal("the README's cluster section has no temporal command")
	return nil
}

// setFlag returns args with flag's value set to value, added when absent.
func setFlag(args []string, flag, value string) []string {
	out := append([]string(nil), args...)
	for i := range len(out) - 1 {
		if out[i] == flag {
			out[i+1] = value
			return out
		}
	}
	return append(out, flag, value)
}
