package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"software.sslmate.com/src/go-pkcs12"

	"github.com/recurhq/recur/internal/recurtest"
	"github.com/recurhq/recur/migrate"
)

// startRecur starts a real recur in process for a test that imports into
// it, which -short skips.
func startRecur(t *testing.T) *recurtest.Stack {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: it imports into a real recur (seconds)")
	}
	clearClientEnv(t)
	st, err := recurtest.Start()
	require.NoError(t, err)
	t.Cleanup(st.Stop)
	return st
}

// withResources makes recur import read rs, whatever its files say: the
// tests of the import itself, apart from its readers.
func withResources(t *testing.T, rs func() []migrate.Resource) {
	read := readImportFiles
	readImportFiles = func(context.Context, importOptions) ([]migrate.Resource, []string, error) { return rs(), nil, nil }
	t.Cleanup(func() { readImportFiles = read })
}

// byName indexes an import's table by NAME.
func byName(t *testing.T, res cliResult) map[string]map[string]string {
	t.Helper()
	table, _, _ := strings.Cut(res.stdout, "\n\n")
	out := map[string]map[string]string{}
	for _, row := range (cliResult{stdout: table}).rows(t) {
		out[row["NAME"]] = row
	}
	return out
}

// summaryLine is the last line of an import's output.
func summaryLine(res cliResult) string {
	lines := strings.Split(strings.TrimRight(res.stdout, "\n"), "\n")
	return lines[len(lines)-1]
}

// TestImportWritesOnlyWhatChanged drives recur import's writing against a
// real recur, with resources as a reader returns them: a dry run writes
// nothing and plans each resource; an import creates what is complete,
// skips what needs the user and reports what the API refuses; the same
// import again writes nothing; a secret changed in the files is an update.
func TestImportWritesOnlyWhatChanged(t *testing.T) {
	st := startRecur(t)
	password := "first secret"
	job := func(name, uri string) migrate.Resource {
		body, err := json.Marshal(map[string]any{"properties": map[string]any{
			"startTime": "2030-01-01T00:00:00Z",
			"action": map[string]any{"type": "Https", "request": map[string]any{"uri": uri, "method": "POST",
				"authentication": map[string]any{"type": "Basic", "username": "u", "password": password}}},
			"recurrence": map[string]any{"frequency": "Day"}}})
		require.NoError(t, err)
		return migrate.Resource{Kind: migrate.Job, Collection: "reports", Job: name, Body: body,
			Source: migrate.Source{File: "main.tf", Path: "azurerm_scheduler_job." + name, Line: 3}}
	}
	withResources(t, func() []migrate.Resource {
		needy := job("needy", "https://example.com/")
		needy.Missing = []migrate.Missing{{Name: "var.key", Path: "action_web.authentication_basic.password", Reason: "the variable has no value"}}
		elsewhere := job("elsewhere", "https://example.com/")
		elsewhere.Collection = "other"
		typo := job("typo", "https://example.com/")
		typo.Body = json.RawMessage(strings.Replace(string(typo.Body), `"startTime"`, `"maxConcurentRuns":2,"startTime"`, 1))
		return []migrate.Resource{
			typo,
			job("nightly", "https://example.com/nightly"),
			needy,
			job("broken", "ftp://example.com/"),
			elsewhere,
			{Kind: migrate.Collection, Collection: "reports", Body: json.RawMessage(`{"location":"westeurope","properties":{"sku":{"name":"Standard"}}}`),
				Source: migrate.Source{File: "main.tf", Path: "azurerm_scheduler_job_collection.reports", Line: 1}},
		}
	})
	file := filepath.Join(t.TempDir(), "main.tf")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	args := []string{"import", "--server", st.API.URL, "--subscription", "sub1", "--resource-group", "rg1", file}

	res := recurCLI(t, "", append(args, "--dry-run")...)
	require.Equal(t, 1, res.code, "a plan with a skipped and a failing resource: %s", res)
	rows := byName(t, res)
	require.Equal(t, "create", rows["reports"]["RESULT"], "%s", res)
	require.Equal(t, "create", rows["reports/nightly"]["RESULT"], "%s", res)
	require.Equal(t, "skip", rows["reports/needy"]["RESULT"], "%s", res)
	require.Equal(t, "needs var.key", rows["reports/needy"]["DETAIL"])
	require.Equal(t, "fail", rows["reports/broken"]["RESULT"], "%s", res)
	require.Contains(t, rows["reports/broken"]["DETAIL"], "properties.action.request.uri")
	require.Equal(t, "fail", rows["other/elsewhere"]["RESULT"], "no collection other: %s", res)
	require.Equal(t, "fail", rows["reports/typo"]["RESULT"], "%s", res)
	require.Contains(t, rows["reports/typo"]["DETAIL"], "UnknownProperty (properties.maxConcurentRuns)")
	require.Contains(t, rows["reports/typo"]["DETAIL"], "did you mean maxConcurrentRuns?")
	require.Contains(t, res.stdout, "action_web.authentication_basic.password needs var.key")
	require.Equal(t, "dry run, nothing written: 2 create, 0 update, 0 unchanged, 1 skip, 3 fail", summaryLine(res))
	require.NotContains(t, res.stdout+res.stderr, password, "no secret is ever printed")
	got := recurCLI(t, "", "collections", "get", "reports", "--server", st.API.URL, "--subscription", "sub1", "--resource-group", "rg1")
	require.Equal(t, 1, got.code, "the dry run created nothing: %s", got)

	// All or nothing: what passes its check is held while others fail.
	res = recurCLI(t, "", args...)
	require.Equal(t, 1, res.code, "%s", res)
	rows = byName(t, res)
	require.Equal(t, "held", rows["reports"]["RESULT"], "%s", res)
	require.Equal(t, "held", rows["reports/nightly"]["RESULT"], "%s", res)
	require.Equal(t, "skipped", rows["reports/needy"]["RESULT"], "%s", res)
	require.Equal(t, "failed", rows["reports/broken"]["RESULT"], "%s", res)
	require.Equal(t, "nothing written, all or nothing: 0 created, 0 updated, 0 unchanged, 1 skipped, 3 failed, 2 held (--partial writes what passes)", summaryLine(res))
	got = recurCLI(t, "", "collections", "get", "reports", "--server", st.API.URL, "--subscription", "sub1", "--resource-group", "rg1")
	require.Equal(t, 1, got.code, "the import wrote nothing: %s", got)

	args = append(args, "--partial")
	res = recurCLI(t, "", args...)
	require.Equal(t, 1, res.code, "%s", res)
	rows = byName(t, res)
	require.Equal(t, "created", rows["reports"]["RESULT"], "%s", res)
	require.Equal(t, "created", rows["reports/nightly"]["RESULT"], "%s", res)
	require.Equal(t, "skipped", rows["reports/needy"]["RESULT"], "%s", res)
	require.Equal(t, "failed", rows["reports/broken"]["RESULT"], "%s", res)
	require.Equal(t, "failed", rows["reports/typo"]["RESULT"], "%s", res)
	require.Contains(t, rows["reports/typo"]["DETAIL"], "UnknownProperty (properties.maxConcurentRuns)")
	require.Equal(t, "main.tf:3 (azurerm_scheduler_job.nightly)", rows["reports/nightly"]["SOURCE"])
	require.Equal(t, "2 created, 0 updated, 0 unchanged, 1 skipped, 3 failed", summaryLine(res))

	for _, dry := range []bool{true, false} {
		a := args
		if dry {
			a = append(a, "--dry-run")
		}
		res = recurCLI(t, "", a...)
		rows = byName(t, res)
		require.Equal(t, "unchanged", rows["reports"]["RESULT"], "%s", res)
		require.Equal(t, "unchanged", rows["reports/nightly"]["RESULT"], "the second import writes nothing: %s", res)
	}

	password = "second secret"
	res = recurCLI(t, "", append(args, "--dry-run")...)
	require.Equal(t, "update", byName(t, res)["reports/nightly"]["RESULT"], "a secret changed in the files: %s", res)
	res = recurCLI(t, "", args...)
	rows = byName(t, res)
	require.Equal(t, "unchanged", rows["reports"]["RESULT"], "%s", res)
	require.Equal(t, "updated", rows["reports/nightly"]["RESULT"], "%s", res)
}

func TestImportFlags(t *testing.T) {
	clearClientEnv(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--subscription", "s"}, "name at least one FILE"},
		{[]string{"a.json"}, "no subscription given: use --subscription or RECUR_SUBSCRIPTION"},
		{[]string{"--subscription", "s", "--concurrency", "0", "a.json"}, "--concurrency 0: want 1 to 64"},
		{[]string{"--subscription", "s", "--set", "novalue", "a.json"}, `"novalue": want NAME=VALUE`},
	} {
		res := recurCLI(t, "", append([]string{"import"}, c.args...)...)
		require.Equal(t, 2, res.code, "%v: %s", c.args, res)
		require.Contains(t, res.stderr, c.want, "%v", c.args)
	}
	file := filepath.Join("..", "..", "migrate", "arm", "testdata", "toplevel.json")
	res := recurCLI(t, "", "import", "--subscription", "s", "--server", "http://127.0.0.1:1", file)
	require.Equal(t, 1, res.code, "%s", res)
	require.Contains(t, res.stderr, "cannot reach the recur server at http://127.0.0.1:1", "once, before any write")
	require.Empty(t, res.stdout, "no row: nothing was tried")
	res = recurCLI(t, "", "import", "-h")
	require.Equal(t, 0, res.code, "%s", res)
	require.Contains(t, res.stdout, "-dry-run")
}

// definitions GETs each resource of a collection of n jobs, keyed by its
// name: the collection's body and its jobs' without their status and
// ETags, which a new run of the same definitions changes. It waits until
// the list of the collection's jobs has them all: lists lag writes.
func definitions(t *testing.T, at []string, collection string, n int) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	get := func(args ...string) map[string]any {
		res := recurCLI(t, "", append(args, at...)...)
		require.Equal(t, 0, res.code, "%s", res)
		body := res.json(t)
		delete(body, "etag")
		if props, ok := body["properties"].(map[string]any); ok {
			delete(props, "status")
		}
		return body
	}
	out[collection] = get("collections", "get", collection, "-o", "json")
	list := eventually(t, func(r cliResult) bool {
		var page struct{ Value []any }
		return r.code == 0 && json.Unmarshal([]byte(r.stdout), &page) == nil && len(page.Value) == n
	}, "", append([]string{"jobs", "list", "--collection", collection, "-o", "json"}, at...)...)
	for _, job := range list.json(t)["value"].([]any) {
		name := job.(map[string]any)["name"].(string)
		out[name] = get("jobs", "get", "--collection", collection, shortName(name), "-o", "json")
	}
	return out
}

// TestImportARMTemplatesAndExportThemBack imports the ARM templates the
// reader's tests use (nested and top-level jobs, parameters, a parameters
// file, a Key Vault secret supplied with --set) into a real recur; a
// second import writes nothing; recur export writes them back as one
// template with each secret a parameter, which, after the collections are
// deleted, imports with the secrets supplied to the same definitions.
func TestImportARMTemplatesAndExportThemBack(t *testing.T) {
	st := startRecur(t)
	at := []string{"--server", st.API.URL, "--subscription", "sub1", "--resource-group", "rg1"}
	testdata := filepath.Join("..", "..", "migrate", "arm", "testdata")
	const sas, password, busKey = "?sv=2019-02-02&sig=c2FzLXNpZ25hdHVyZQ%3D%3D", "p@ss<word>&1", "c2VydmljZWJ1c2tleQ=="
	importOps := append([]string{"import", filepath.Join(testdata, "collection.json"), "--parameters", filepath.Join(testdata, "collection.parameters.json"),
		"--set", "queueSasToken=" + sas, "--location", "westeurope"}, at...)
	importNightlies := append([]string{"import", filepath.Join(testdata, "toplevel.json"), "--location", "westeurope",
		"--set", "collectionName=nightlies", "--set", "[equals(parameters('environment'), 'prod')]=true"}, at...)

	for _, c := range []struct {
		args  []string
		names []string
	}{
		{importOps, []string{"contoso-ops", "contoso-ops/billing-export", "contoso-ops/queue-ping", "contoso-ops/servicebus-report"}},
		{importNightlies, []string{"nightlies", "nightlies/nightly", "nightlies/prod-only"}},
	} {
		res := recurCLI(t, "", c.args...)
		require.Equal(t, 0, res.code, "%s", res)
		rows := byName(t, res)
		require.Len(t, rows, len(c.names), "%s", res)
		for _, name := range c.names {
			require.Equal(t, "created", rows[name]["RESULT"], "%s: %s", name, res)
		}
		res = recurCLI(t, "", c.args...)
		require.Equal(t, 0, res.code, "%s", res)
		for _, name := range c.names {
			require.Equal(t, "unchanged", byName(t, res)[name]["RESULT"], "the second import of %s: %s", name, res)
		}
	}
	collections := map[string]int{"contoso-ops": 3, "nightlies": 2}
	before := map[string]map[string]any{}
	for coll, n := range collections {
		maps.Copy(before, definitions(t, at, coll, n))
	}
	require.Len(t, before, 7)

	exported := filepath.Join(t.TempDir(), "exported.json")
	res := recurCLI(t, "", append([]string{"export", "-o", exported}, at...)...)
	require.Equal(t, 0, res.code, "%s", res)
	require.Contains(t, res.stderr, "exported 2 collections and 5 jobs; 3 secrets are parameters without a value")
	data, err := os.ReadFile(exported)
	require.NoError(t, err)
	for _, secret := range []string{sas, password, busKey} {
		require.NotContains(t, string(data), secret, "an export holds no secret")
	}
	var template struct {
		Parameters map[string]struct{ Type string }
	}
	require.NoError(t, json.Unmarshal(data, &template))
	var sets []string
	for name, p := range template.Parameters {
		require.Equal(t, "securestring", p.Type, name)
		value := map[string]string{"password": password, "sasToken": sas, "sasKey": busKey}[name[strings.LastIndex(name, "_")+1:]]
		require.NotEmpty(t, value, "the parameter %s names its secret's member last", name)
		sets = append(sets, "--set", name+"="+value)
	}
	require.Len(t, sets, 6)

	for coll := range collections {
		res := recurCLI(t, "", append([]string{"collections", "delete", coll}, at...)...)
		require.Equal(t, 0, res.code, "%s", res)
	}
	res = recurCLI(t, "", append(append([]string{"import", exported}, sets...), at...)...)
	require.Equal(t, 0, res.code, "%s", res)
	require.Equal(t, "7 created, 0 updated, 0 unchanged, 0 skipped, 0 failed", summaryLine(res))
	after := map[string]map[string]any{}
	for coll, n := range collections {
		maps.Copy(after, definitions(t, at, coll, n))
	}
	require.Equal(t, before, after, "export, delete and import give back every definition")
}

func TestImportFailsWhatIsDefinedMoreThanOnce(t *testing.T) {
	at := func(file string, r migrate.Resource) importItem {
		r.Source = migrate.Source{File: file, Path: "resources[0]"}
		return importItem{Resource: r}
	}
	coll := migrate.Resource{Kind: migrate.Collection, ResourceGroup: "rg", Collection: "c"}
	job := migrate.Resource{Kind: migrate.Job, ResourceGroup: "rg", Collection: "c", Job: "j"}
	elsewhere := job
	elsewhere.ResourceGroup = "other"
	unnamed := migrate.Resource{Kind: migrate.Job, ResourceGroup: "rg", Collection: "c"}
	items := []importItem{at("a.json", coll), at("b.json", coll), at("a.json", job), at("b.json", elsewhere),
		at("a.json", unnamed), at("b.json", unnamed)}
	failDuplicates(items)
	require.Equal(t, "defined more than once: also at b.json (resources[0])", items[0].detail)
	require.Equal(t, "defined more than once: also at a.json (resources[0])", items[1].detail)
	require.Equal(t, outcomeFailed, items[1].outcome)
	for _, it := range items[2:] {
		require.Empty(t, it.outcome, "%s in %s: once in its resource group, or unnamed", it.Name(), it.ResourceGroup)
	}
}

// writePFX writes a PKCS#12 file of a new self-signed certificate,
// sealed with password, at file.
func writePFX(t *testing.T, file, password string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "scheduler client"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(365 * 24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pfx, err := pkcs12.Modern.Encode(key, cert, nil, password)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, pfx, 0o600))
}

// copyDir copies the files of dir into a new temporary directory.
func copyDir(t *testing.T, dir string) string {
	t.Helper()
	out := t.TempDir()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(out, e.Name()), data, 0o600))
	}
	return out
}

// TestImportTheAzurermExample imports the reader's copy of the azurerm
// provider's scheduler example (Terraform 0.11: resource group variables,
// ${} references, a file() certificate, a storage queue whose key comes
// from another resource, monthly occurrences as a list of maps) into a
// real recur: without the certificate and the key, the report names both
// and how to supply them, and the rest is created; with them, everything
// is. The same example in 0.12+ syntax then finds every resource
// unchanged.
func TestImportTheAzurermExample(t *testing.T) {
	st := startRecur(t)
	at := []string{"--server", st.API.URL, "--subscription", "sub1"}
	testdata := filepath.Join("..", "..", "migrate", "terraform", "testdata")
	v011, v012 := copyDir(t, filepath.Join(testdata, "azurerm011")), copyDir(t, filepath.Join(testdata, "azurerm012"))
	const key = "azurerm_storage_account.example.primary_access_key"

	res := recurCLI(t, "", append([]string{"import", v011}, at...)...)
	require.Equal(t, 1, res.code, "%s", res)
	rows := byName(t, res)
	require.Len(t, rows, 8, "%s", res)
	require.Equal(t, "skipped", rows["tfex-scheduler-job-collection/tfex-web-recurring_weekly-auth_cert"]["RESULT"], "%s", res)
	require.Equal(t, "skipped", rows["tfex-scheduler-job-collection/tfex-schedulerjob-storage_queue"]["RESULT"], "%s", res)
	require.Equal(t, "tfex-job_collection", rows["tfex-scheduler-job-collection"]["RESOURCE GROUP"], "the variable's default")
	require.Contains(t, res.stdout, `needs file("cert.pfx"): the file `)
	require.Contains(t, res.stdout, "(supply it with --set '"+key+"=VALUE')")
	require.Equal(t, "nothing written, all or nothing: 0 created, 0 updated, 0 unchanged, 2 skipped, 0 failed, 6 held (--partial writes what passes)", summaryLine(res))

	writePFX(t, filepath.Join(v011, "cert.pfx"), "terraform")
	pfx, err := os.ReadFile(filepath.Join(v011, "cert.pfx"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(v012, "cert.pfx"), pfx, 0o600))
	res = recurCLI(t, "", append([]string{"import", v011, "--set", key + "=?sv=2019-02-02&sig=a2V5"}, at...)...)
	require.Equal(t, 0, res.code, "%s", res)
	require.Equal(t, "8 created, 0 updated, 0 unchanged, 0 skipped, 0 failed", summaryLine(res))
	job := recurCLI(t, "", "jobs", "get", "tfex-web-recurring_weekly-auth_cert", "-o", "json", "--resource-group", "tfex-job_collection",
		"--collection", "tfex-scheduler-job-collection", "--server", st.API.URL, "--subscription", "sub1")
	require.Equal(t, 0, job.code, "%s", job)
	var got struct {
		Properties struct {
			Action struct {
				Request struct {
					Authentication struct{ CertificateSubjectName string }
				}
			}
		}
	}
	require.NoError(t, json.Unmarshal([]byte(job.stdout), &got))
	require.Equal(t, "CN=scheduler client", got.Properties.Action.Request.Authentication.CertificateSubjectName, "the certificate is the file's")

	res = recurCLI(t, "", append([]string{"import", v012, "--set", key + "=?sv=2019-02-02&sig=a2V5"}, at...)...)
	require.Equal(t, 0, res.code, "%s", res)
	require.Equal(t, "0 created, 0 updated, 8 unchanged, 0 skipped, 0 failed", summaryLine(res), "the 0.12 copy says the same")
}

func TestImportProgressBar(t *testing.T) {
	var term bytes.Buffer
	b := progressBar{w: &term, total: 4}
	b.step()
	b.step()
	b.clear()
	require.Equal(t, "\r[#######.......................] 1/4\r[###############...............] 2/4\r"+strings.Repeat(" ", 36)+"\r", term.String())
}

// TestImportTerraformPatterns imports the Terraform patterns of real
// configurations (migrate/terraform/testdata/patterns011 and
// patterns012: blocks written as attributes, monthly_occurrences as a
// list of maps and as repeated blocks, a PFX read with
// base64encode(file()) and with filebase64()) into a real recur: the
// 0.11 configuration creates every resource, with its fields as written,
// and the 0.12 one finds them all unchanged.
func TestImportTerraformPatterns(t *testing.T) {
	st := startRecur(t)
	at := []string{"--server", st.API.URL, "--subscription", "sub1"}
	testdata := filepath.Join("..", "..", "migrate", "terraform", "testdata")
	v011, v012 := copyDir(t, filepath.Join(testdata, "patterns011")), copyDir(t, filepath.Join(testdata, "patterns012"))
	writePFX(t, filepath.Join(v011, "client.pfx"), "client-pa55")
	pfx, err := os.ReadFile(filepath.Join(v011, "client.pfx"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(v012, "client.pfx"), pfx, 0o600))

	res := recurCLI(t, "", append([]string{"import", v011}, at...)...)
	require.Equal(t, 0, res.code, "%s", res)
	require.Equal(t, "4 created, 0 updated, 0 unchanged, 0 skipped, 0 failed", summaryLine(res))
	rows := byName(t, res)
	for _, name := range []string{"pat-collection", "pat-collection/billing-export", "pat-collection/partner-sync", "pat-collection/queue-drain"} {
		require.Equal(t, "created", rows[name]["RESULT"], "%s: %s", name, res)
		require.Equal(t, "pat-jobs", rows[name]["RESOURCE GROUP"], "%s", name)
	}
	res = recurCLI(t, "", append([]string{"import", v012}, at...)...)
	require.Equal(t, 0, res.code, "%s", res)
	require.Equal(t, "0 created, 0 updated, 4 unchanged, 0 skipped, 0 failed", summaryLine(res), "the 0.12 configuration says the same, secrets included")

	got := definitions(t, append(at, "--resource-group", "pat-jobs"), "pat-collection", 3)
	props := func(name string) map[string]any { return got[name]["properties"].(map[string]any) }
	member := func(v any, path ...string) any {
		for _, p := range path {
			v = v.(map[string]any)[p]
		}
		return v
	}
	billing := props("pat-collection/billing-export")
	require.Equal(t, []any{map[string]any{"day": "monday", "occurrence": 1.0}, map[string]any{"day": "friday", "occurrence": -1.0}},
		member(billing, "recurrence", "schedule", "monthlyOccurrences"), "days as Azure's answers write them")
	require.Equal(t, map[string]any{"storageAccount": "paterrors", "queueName": "billing-failures", "message": "billing export failed"},
		member(billing, "action", "errorAction", "queueMessage"), "the SAS token is a secret the API never shows")
	require.Equal(t, map[string]any{"retryType": "fixed", "retryInterval": "00:01:00", "retryCount": 3.0}, member(billing, "action", "retryPolicy"))
	partner := props("pat-collection/partner-sync")
	require.Equal(t, "CN=scheduler client", member(partner, "action", "request", "authentication", "certificateSubjectName"), "the certificate is the file's")
	require.Equal(t, "contoso.onmicrosoft.com", member(partner, "action", "errorAction", "request", "authentication", "tenant"))
	require.Equal(t, []any{1.0, 15.0, -1.0}, member(props("pat-collection/queue-drain"), "recurrence", "schedule", "monthDays"))
}

// TestImportNamesWhatTheFilesLeaveOut imports a Terraform job whose
// resource group is an azurerm_resource_group the files do not declare
// and whose name needs a variable: the report names the job by its
// address and says which --set gives the resource group; supplied, the
// job is created.
func TestImportNamesWhatTheFilesLeaveOut(t *testing.T) {
	st := startRecur(t)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.tf"), []byte(`
resource "azurerm_scheduler_job_collection" "ops" {
  name                = "ops"
  resource_group_name = azurerm_resource_group.shared.name
  location            = "westeurope"
  sku                 = "standard"
}

resource "azurerm_scheduler_job" "nightly" {
  name                = "nightly-${var.env}"
  resource_group_name = azurerm_resource_group.shared.name
  job_collection_name = azurerm_scheduler_job_collection.ops.name
  start_time          = "2030-01-01T00:00:00Z"

  action_web {
    url = "https://example.com/nightly"
  }
}

variable "env" {}
`), 0o600))
	at := []string{"--server", st.API.URL, "--subscription", "sub1"}
	res := recurCLI(t, "", append([]string{"import", dir, "--dry-run"}, at...)...)
	require.Equal(t, 1, res.code, "%s", res)
	rows := byName(t, res)
	require.Equal(t, "skip", rows["ops"]["RESULT"], "%s", res)
	require.Equal(t, "needs azurerm_resource_group.shared.name", rows["ops"]["DETAIL"])
	require.Equal(t, "skip", rows["azurerm_scheduler_job.nightly"]["RESULT"], "named by its address: %s", res)
	require.Equal(t, "needs azurerm_resource_group.shared.name, var.env", rows["azurerm_scheduler_job.nightly"]["DETAIL"])
	require.Contains(t, res.stdout, "job azurerm_scheduler_job.nightly: resource_group_name needs azurerm_resource_group.shared.name: "+
		"azurerm_resource_group.shared is not in the files read (or give every resource its group with --resource-group) "+
		"(supply it with --set 'azurerm_resource_group.shared.name=VALUE')")
	require.NotContains(t, res.stdout, "no resource group")

	for _, given := range [][]string{{"--set", "azurerm_resource_group.shared.name=ops-rg"}, {"--resource-group", "ops-rg"}} {
		res = recurCLI(t, "", append(append([]string{"import", dir, "--set", "var.env=prod"}, given...), at...)...)
		require.Equal(t, 0, res.code, "%s", res)
		rows = byName(t, res)
		require.Equal(t, "ops-rg", rows["ops/nightly-prod"]["RESOURCE GROUP"], "%s", res)
		require.Contains(t, []string{"created", "unchanged"}, rows["ops/nightly-prod"]["RESULT"], "%s", res)
	}
}

// TestImportTheWebAppQuickstart imports the reader's copy of the shape of
// Azure's web app quickstart (a web app, its collection and jobs nested
// with dependsOn, URIs from reference(), a retry policy inside each
// request, which Azure ignored) into a real recur. Without values, one
// dry run names all the template leaves to its user, the resource group
// beside the parameter, and how to give each; --strict fails the jobs
// whose request holds what recur does not have; without it they import,
// that member left out and named in a warning, and import again
// unchanged. The API itself still refuses the same body.
func TestImportTheWebAppQuickstart(t *testing.T) {
	st := startRecur(t)
	site := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(site.Close)
	at := []string{"--server", st.API.URL, "--subscription", "sub1"}
	template := filepath.Join("..", "..", "migrate", "arm", "testdata", "webapp.json")
	const keepWarm, report = "resources[2].resources[0].properties.action.request.uri", "resources[2].resources[1].properties.action.request.uri"

	res := recurCLI(t, "", append([]string{"import", template, "--dry-run"}, at...)...)
	require.Equal(t, 1, res.code, "%s", res)
	rows := byName(t, res)
	require.Equal(t, "needs siteName, [resourceGroup().location], --resource-group", rows["[parameters('collectionName')]"]["DETAIL"], "the collection: %s", res)
	for _, want := range []string{
		"(supply it with --set 'siteName=VALUE')",
		"(supply it with --set '" + keepWarm + "=VALUE')",
		"(supply it with --set '" + report + "=VALUE')",
		"resources[2] needs --resource-group: ",
		"resourceGroup().location is not given to recur import: give --location",
	} {
		require.Contains(t, res.stdout, want, "one round names every value")
	}

	args := append([]string{"import", template, "--resource-group", "rg1", "--location", "westeurope", "--set", "siteName=contoso-web",
		"--set", keepWarm + "=" + site.URL, "--set", report + "=" + site.URL + "/api/report"}, at...)
	res = recurCLI(t, "", append(args, "--strict", "--dry-run")...)
	require.Equal(t, 1, res.code, "%s", res)
	rows = byName(t, res)
	require.Equal(t, "create", rows["contoso-web-jobs"]["RESULT"], "%s", res)
	for _, job := range []string{"contoso-web-jobs/keep-warm", "contoso-web-jobs/nightly-report"} {
		require.Equal(t, "fail", rows[job]["RESULT"], "%s", res)
		require.Equal(t, "--strict: holds what recur does not have: properties.action.request.retryPolicy", rows[job]["DETAIL"])
	}

	res = recurCLI(t, "", args...)
	require.Equal(t, 0, res.code, "%s", res)
	require.Equal(t, "3 created, 0 updated, 0 unchanged, 0 skipped, 0 failed", summaryLine(res))
	require.Contains(t, res.stdout, "\nMembers recur does not have, left out (--strict fails their resources):\n"+
		"  job contoso-web-jobs/keep-warm: properties.action.request.retryPolicy: Azure ignored this; did you mean properties.action.retryPolicy?\n"+
		"  job contoso-web-jobs/nightly-report: properties.action.request.retryPolicy: Azure ignored this; did you mean properties.action.retryPolicy?\n")
	got := recurCLI(t, "", append([]string{"jobs", "get", "nightly-report", "-o", "json", "--resource-group", "rg1", "--collection", "contoso-web-jobs"}, at...)...)
	require.Equal(t, 0, got.code, "%s", got)
	request := got.json(t)["properties"].(map[string]any)["action"].(map[string]any)["request"].(map[string]any)
	require.Equal(t, site.URL+"/api/report", request["uri"])
	require.Equal(t, `{"site": "contoso-web"}`, request["body"])
	require.NotContains(t, request, "retryPolicy")
	res = recurCLI(t, "", args...)
	require.Equal(t, 0, res.code, "%s", res)
	require.Equal(t, "0 created, 0 updated, 3 unchanged, 0 skipped, 0 failed", summaryLine(res))

	body := filepath.Join(t.TempDir(), "job.json")
	require.NoError(t, os.WriteFile(body, []byte(`{"properties": {"action": {"type": "Http",
		"request": {"uri": "`+site.URL+`", "method": "GET", "retryPolicy": {"retryType": "None"}}},
		"recurrence": {"frequency": "Minute", "interval": 5}}}`), 0o600))
	put := recurCLI(t, "", append([]string{"jobs", "put", "direct", "-f", body, "--resource-group", "rg1", "--collection", "contoso-web-jobs"}, at...)...)
	require.Equal(t, 1, put.code, "%s", put)
	require.Contains(t, put.stderr, "UnknownProperty", "the API stays strict")
	require.Contains(t, put.stderr, "properties.action.request.retryPolicy")
}

// TestImportWarningsAreBounded: the members left out are listed at most
// maxNeeds lines long, each text shortened, however many a file holds.
func TestImportWarningsAreBounded(t *testing.T) {
	long := strings.Repeat("x", 1000)
	var items []importItem
	for i := range 150 {
		items = append(items, importItem{Resource: migrate.Resource{Kind: migrate.Job, Collection: "c", Job: fmt.Sprint("j", i),
			Warnings: []migrate.Warning{{Path: "properties." + long, Message: "Azure ignored this member"}}}})
	}
	var out bytes.Buffer
	printWarnings(&out, items)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 1+maxNeeds+1, "a heading, %d members and how many more", maxNeeds)
	require.Equal(t, "  and 50 more", lines[len(lines)-1])
	require.Contains(t, lines[1], "  job c/j0: properties.xxx")
	require.Contains(t, lines[1], "… (1011 bytes): Azure ignored this member")
	require.Less(t, out.Len(), 40<<10)
}
