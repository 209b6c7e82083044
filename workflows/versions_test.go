package workflows_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
)

// TestEveryVersionHasARecordedHistory: every version ID of versions.go
// is in effect (a Version marker) in at least one history under testdata,
// so that replaying them covers the code on both sides of each change;
// and every version marker of testdata names an ID versions.go has.
func TestEveryVersionHasARecordedHistory(t *testing.T) {
	declared := versionIDs(t)
	recorded := map[string][]string{} // version ID -> files
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	require.NoError(t, err)
	for _, file := range files {
		r, err := os.Open(file)
		require.NoError(t, err)
		h, err := client.HistoryFromJSON(r, client.HistoryJSONOptions{})
		r.Close()
		require.NoError(t, err, file)
		for _, e := range h.GetEvents() {
			m := e.GetMarkerRecordedEventAttributes()
			if e.GetEventType() != enumspb.EVENT_TYPE_MARKER_RECORDED || m.GetMarkerName() != "Version" {
				continue
			}
			var id string
			require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(m.GetDetails()["change-id"], &id), file)
			recorded[id] = append(recorded[id], filepath.Base(file))
		}
	}
	for _, id := range declared {
		assert.NotEmpty(t, recorded[id], "%s has no recorded history: go run ./e2e/recordhistories -tag <name>", id)
	}
	for id, in := range recorded {
		assert.Contains(t, declared, id, "%v record version %s, which versions.go does not declare", in, id)
	}
}

// versionIDs returns the values of the constants of versions.go.
func versionIDs(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "versions.go", nil, 0)
	require.NoError(t, err)
	var ids []string
	ast.Inspect(f, func(n ast.Node) bool {
		spec, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		for _, v := range spec.Values {
			lit, ok := v.(*ast.BasicLit)
			require.True(t, ok && lit.Kind == token.STRING, "version IDs are string literals")
			id, err := strconv.Unquote(lit.Value)
			require.NoError(t, err)
			ids = append(ids, id)
		}
		return true
	})
	return ids
}
