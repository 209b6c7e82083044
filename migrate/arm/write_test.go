package arm

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/migrate"
)

// TestWriteLeavesSigningSecretsToParameters: a request's signing secrets,
// which an answer only counts, are each a securestring parameter in their
// list, and read back as the values given.
func TestWriteLeavesSigningSecretsToParameters(t *testing.T) {
	r := migrate.Resource{Kind: migrate.Job, ResourceGroup: "rg", Collection: "c", Job: "j"}
	e, err := migrate.ForExport(r, json.RawMessage(`{"properties": {"action": {"type": "Https",
		"request": {"uri": "https://example.com", "method": "POST", "signing": {"secretCount": 2}}}}}`), migrate.ExportOptions{})
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, []migrate.Exported{e}))
	require.Contains(t, buf.String(), `"[parameters('c_j_signing_secrets_1')]"`)
	require.NotContains(t, buf.String(), "secretCount")
	path := filepath.Join(t.TempDir(), "export.json")
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o600))

	rs := byName(t, []string{path}, Options{ResourceGroup: "rg",
		Set: map[string]string{"c_j_signing_secrets_0": "whsec_first", "c_j_signing_secrets_1": "whsec_second"}})
	var body map[string]any
	require.NoError(t, json.Unmarshal(rs["c/j"].Body, &body))
	request := body["properties"].(map[string]any)["action"].(map[string]any)["request"].(map[string]any)
	require.Equal(t, map[string]any{"secrets": []any{"whsec_first", "whsec_second"}}, request["signing"])
}
