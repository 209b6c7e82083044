package lifecycle_test

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	lt "github.com/recurhq/recur/lifecycle/lifecycletest"
)

var update = flag.Bool("update", false, "rewrite docs/architecture.md's state table from the machine")

const (
	tableStart = "<!-- state table: made by `go test ./lifecycle -run TestTheStateTableIsTheMachines -update` -->\n"
	tableEnd   = "<!-- end of the state table -->"
)

// TestTheStateTableIsTheMachines: docs/architecture.md's table of what
// each event does in each state is what the machine does (one source:
// lifecycletest.Table runs each cell through it); -update rewrites it.
func TestTheStateTableIsTheMachines(t *testing.T) {
	const doc = "../docs/architecture.md"
	raw, err := os.ReadFile(doc)
	require.NoError(t, err)
	text := string(raw)
	start, end := strings.Index(text, tableStart), strings.Index(text, tableEnd)
	require.True(t, start >= 0 && end > start, "docs/architecture.md holds the state table between its markers")
	table := lt.Table()
	if *update {
		text = text[:start+len(tableStart)] + "\n" + table + "\n" + text[end:]
		require.NoError(t, os.WriteFile(doc, []byte(text), 0o644))
		return
	}
	require.Equal(t, "\n"+table+"\n", text[start+len(tableStart):end], "the state table is out of date: go test ./lifecycle -run TestTheStateTableIsTheMachines -update")
}
