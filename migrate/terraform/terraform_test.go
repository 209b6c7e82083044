package terraform

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/migrate"
)

// pfx stands for a client certificate: the reader only reads bytes, and
// these are not UTF-8, as a real PKCS#12 file is not. Its base64 is
// MIIB//6A.
var pfx = []byte{0x30, 0x82, 0x01, 0xff, 0xfe, 0x80}

// sasToken is what the tests give for the storage account's key.
const sasToken = "?sv=2017-04-17&ss=q&sig=supplied"

// resourceView is a Resource as the golden file writes it.
type resourceView struct {
	Kind          string          `json:"kind"`
	ResourceGroup string          `json:"resourceGroup"`
	Collection    string          `json:"collection"`
	Job           string          `json:"job,omitempty"`
	Path          string          `json:"path"`
	Body          json.RawMessage `json:"body"`
	Missing       []missingView   `json:"missing,omitempty"`
}

type missingView struct {
	Name string `json:"name"`
	Path string `json:"path"`
}

func view(t *testing.T, rs []migrate.Resource) []resourceView {
	t.Helper()
	out := make([]resourceView, 0, len(rs))
	for _, r := range rs {
		v := resourceView{Kind: r.Kind.String(), ResourceGroup: r.ResourceGroup, Collection: r.Collection,
			Job: r.Job, Path: r.Source.Path, Body: r.Body}
		for _, m := range r.Missing {
			assert.NotEmpty(t, m.Reason, "%s: %s", r.Source, m.Name)
			v.Missing = append(v.Missing, missingView{m.Name, m.Path})
		}
		out = append(out, v)
	}
	return out
}

// assertResources compares rs with the golden file, bodies as JSON.
func assertResources(t *testing.T, golden string, rs []migrate.Resource) {
	t.Helper()
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	got, err := json.Marshal(view(t, rs))
	require.NoError(t, err)
	require.JSONEq(t, string(want), string(got))
}

// example copies a testdata configuration into a directory of its own,
// with its certificate beside it.
func example(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	files, err := filepath.Glob(filepath.Join("testdata", name, "*"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o600))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cert.pfx"), pfx, 0o600))
	return dir
}

func TestReadExample(t *testing.T) {
	for _, syntax := range []string{"azurerm011", "azurerm012"} {
		t.Run(syntax, func(t *testing.T) {
			dir := example(t, syntax)
			rs, err := Read([]string{dir}, Options{})
			require.NoError(t, err)
			assertResources(t, filepath.Join("testdata", "azurerm.golden.json"), rs)
			assertDecodes(t, rs)

			for _, r := range rs {
				assert.Equal(t, filepath.Join(dir, "main.tf"), r.Source.File)
				assert.Positive(t, r.Source.Line)
			}
			assert.Equal(t, "azurerm_scheduler_job_collection.example", rs[0].Source.Path)
		})
	}
}

// TestReadExampleSupplied gives the storage account's key with --set: the
// job has no Missing left and its body carries the token.
func TestReadExampleSupplied(t *testing.T) {
	for _, syntax := range []string{"azurerm011", "azurerm012"} {
		t.Run(syntax, func(t *testing.T) {
			rs, err := Read([]string{example(t, syntax)}, Options{
				Set: map[string]string{"azurerm_storage_account.example.primary_access_key": sasToken}})
			require.NoError(t, err)
			r := find(t, rs, "azurerm_scheduler_job.storage-queue")
			assert.Empty(t, r.Missing)
			var job jobs.Job
			require.NoError(t, json.Unmarshal(r.Body, &job))
			assert.Equal(t, sasToken, job.Properties.Action.QueueMessage.SasToken)
			for _, r := range rs {
				assert.Empty(t, r.Missing, r.Source.Path)
			}
		})
	}
}

// TestReadSyntaxesAgree reads the two configurations: the same resources,
// where they are defined apart.
func TestReadSyntaxesAgree(t *testing.T) {
	old, err := Read([]string{example(t, "azurerm011")}, Options{})
	require.NoError(t, err)
	current, err := Read([]string{example(t, "azurerm012")}, Options{})
	require.NoError(t, err)
	require.Len(t, current, len(old))
	for i := range old {
		old[i].Source, current[i].Source = migrate.Source{}, migrate.Source{}
		assert.JSONEq(t, string(old[i].Body), string(current[i].Body))
		old[i].Body, current[i].Body = nil, nil
	}
	assert.Equal(t, old, current)
}

func find(t *testing.T, rs []migrate.Resource, address string) migrate.Resource {
	t.Helper()
	for _, r := range rs {
		if r.Source.Path == address {
			return r
		}
	}
	require.Failf(t, "no resource", "%s is not among the resources read", address)
	return migrate.Resource{}
}

// assertDecodes checks that each body is in recur's shape: it decodes
// into recur's types with no member left over and, when nothing is
// Missing, recur accepts it (but a client certificate, which the test's
// stand-in is not).
func assertDecodes(t *testing.T, rs []migrate.Resource) {
	t.Helper()
	created := time.Date(2019, 7, 1, 0, 0, 0, 0, time.UTC)
	for _, r := range rs {
		dec := json.NewDecoder(bytes.NewReader(r.Body))
		dec.DisallowUnknownFields()
		key := jobs.Key{Subscription: "sub", ResourceGroup: r.ResourceGroup, Collection: r.Collection, Job: r.Job}
		if r.Kind == migrate.Collection {
			var c jobs.Collection
			require.NoError(t, dec.Decode(&c), r.Source.Path)
			require.NoError(t, c.Accept(key), r.Source.Path)
			continue
		}
		var j jobs.Job
		require.NoError(t, dec.Decode(&j), r.Source.Path)
		if a := j.Properties.Action.Request; len(r.Missing) > 0 || a != nil && a.Authentication != nil && a.Authentication.Type == jobs.AuthClientCertificate {
			continue
		}
		require.NoError(t, j.Accept(key, created), r.Source.Path)
	}
}
