package arm

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/migrate"
)

// TestReadBuiltTemplates reads a template a Bicep CLI built, given as
// it was built, under the name of its Bicep file: the file itself is
// not read as JSON, and the resources name it without the template's
// lines.
func TestReadBuiltTemplates(t *testing.T) {
	template, err := os.ReadFile(filepath.Join("testdata", "toplevel.json"))
	require.NoError(t, err)
	bicep := filepath.Join(t.TempDir(), "main.bicep")
	require.NoError(t, os.WriteFile(bicep, []byte("param collectionName string\n"), 0o600))
	budget := migrate.NewBudget(migrate.DefaultLimits)
	rs, err := Read([]string{bicep}, Options{Built: map[string][]byte{bicep: template}, Location: "westeurope",
		Set: map[string]string{"collectionName": "nightlies"}, Budget: budget})
	require.NoError(t, err)
	require.NotEmpty(t, rs)
	for _, r := range rs {
		assert.Equal(t, migrate.Source{File: bicep, Path: r.Source.Path}, r.Source)
	}
	assert.Equal(t, "nightlies", rs[0].Collection)
	assert.Empty(t, budget.Files(), "the template was read by who built it")
}
