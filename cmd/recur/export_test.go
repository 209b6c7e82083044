package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestExportKeepsCredentialsOutAndTheFileToItsOwner: a job whose headers
// and URI hold credentials, in clear in recur's answers, is exported in
// both formats with each of them a parameter or variable without a value,
// a header named by --secret-headers too, into a file only its owner may
// read, though it was another's before; the ARM export imports back, the
// credentials supplied, to the same definitions.
func TestExportKeepsCredentialsOutAndTheFileToItsOwner(t *testing.T) {
	st := startRecur(t)
	at := []string{"--server", st.API.URL, "--subscription", "sub1", "--resource-group", "rg1"}
	const apiKey, sig, tenant = "api-k3y-value", "c2lnbmF0dXJl", "tenant-s3cret"
	res := recurCLI(t, `{"properties":{}}`, append([]string{"collections", "put", "vault", "-f", "-"}, at...)...)
	require.Equal(t, 0, res.code, "%s", res)
	job := `{"properties": {"state": "Disabled", "recurrence": {"frequency": "Hour", "interval": 1},
		"action": {"type": "Https", "request": {"method": "POST", "uri": "https://acct.blob.example/c/b?sv=2019-02-02&sig=` + sig + `",
			"headers": {"X-Api-Key": "` + apiKey + `", "X-Tenant": "` + tenant + `", "Content-Type": "application/json"}}}}}`
	res = recurCLI(t, job, append([]string{"jobs", "put", "copy", "--collection", "vault", "-f", "-"}, at...)...)
	require.Equal(t, 0, res.code, "%s", res)
	before := definitions(t, at, "vault", 1)

	dir := t.TempDir()
	for _, format := range []string{"arm", "terraform"} {
		out := filepath.Join(dir, map[string]string{"arm": "export.json", "terraform": "export.tf"}[format])
		require.NoError(t, os.WriteFile(out, []byte("old"), 0o644))
		res := recurCLI(t, "", append([]string{"export", "--format", format, "--secret-headers", "x-tenant", "-o", out}, at...)...)
		require.Equal(t, 0, res.code, "%s", res)
		require.Contains(t, res.stderr, "exported 1 collections and 1 jobs; 3 secrets are", "%s", res)
		info, err := os.Stat(out)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), info.Mode().Perm(), format)
		data, err := os.ReadFile(out)
		require.NoError(t, err)
		for _, secret := range []string{apiKey, sig, tenant} {
			require.NotContains(t, string(data), secret, "%s: an export holds no credential", format)
		}
		require.Contains(t, string(data), "application/json", "%s: other headers are kept", format)
	}

	res = recurCLI(t, "", append([]string{"collections", "delete", "vault"}, at...)...)
	require.Equal(t, 0, res.code, "%s", res)
	uri := "https://acct.blob.example/c/b?sv=2019-02-02&sig=" + sig
	sets := []string{"--set", "vault_copy_uri=" + uri, "--set", "vault_copy_headers_X_Api_Key=" + apiKey,
		"--set", "vault_copy_headers_X_Tenant=" + tenant}
	res = recurCLI(t, "", append(append([]string{"import", filepath.Join(dir, "export.json")}, sets...), at...)...)
	require.Equal(t, 0, res.code, "%s", res)
	require.True(t, strings.HasPrefix(summaryLine(res), "2 created"), "%s", res)
	require.Equal(t, before, definitions(t, at, "vault", 1), "export, delete and import give back the definition")
}
