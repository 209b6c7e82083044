package terraform

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/migrate"
)

// missing returns the Missing of each resource by address, as name@path.
func missing(rs []migrate.Resource) map[string][]string {
	out := map[string][]string{}
	for _, r := range rs {
		out[r.Source.Path] = []string{}
		for _, m := range r.Missing {
			out[r.Source.Path] = append(out[r.Source.Path], m.Name+"@"+m.Path)
		}
	}
	return out
}

// member returns the member at path of a body.
func member(t *testing.T, body json.RawMessage, path ...string) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(body, &v))
	for _, p := range path {
		m, ok := v.(map[string]any)
		require.True(t, ok, "%v has no %s", v, p)
		v = m[p]
	}
	return v
}

func byAddress(rs []migrate.Resource) map[string]migrate.Resource {
	out := map[string]migrate.Resource{}
	for _, r := range rs {
		out[r.Source.Path] = r
	}
	return out
}

func TestReadMissing(t *testing.T) {
	rs, err := Read([]string{filepath.Join("testdata", "vars")}, Options{})
	require.NoError(t, err)
	const rg = "var.rg@resource_group_name"
	assert.Equal(t, map[string][]string{
		"azurerm_scheduler_job_collection.jobs": {rg},
		"azurerm_scheduler_job.web":             {rg, "var.url@action_web.url"},
		"azurerm_scheduler_job.local":           {rg, "timestamp()@action_web.body"},
		"azurerm_scheduler_job.cert": {rg,
			`file("certs/missing.pfx")@action_web.authentication_certificate.pfx`,
			"data.azurerm_key_vault_secret.pfx.value@action_web.authentication_certificate.password",
		},
		"azurerm_scheduler_job.counted": {"@count"},
		"azurerm_scheduler_job.each":    {"@for_each"},
	}, missing(rs))
	for _, r := range rs {
		assert.Empty(t, r.ResourceGroup, r.Source.Path)
	}

	// --resource-group puts every resource in its group: the variable
	// is needed no more.
	placed, err := Read([]string{filepath.Join("testdata", "vars")}, Options{ResourceGroup: "ops"})
	require.NoError(t, err)
	for _, r := range placed {
		assert.Equal(t, "ops", r.ResourceGroup, r.Source.Path)
		for _, m := range r.Missing {
			assert.NotEqual(t, "resource_group_name", m.Path, r.Source.Path)
		}
	}

	got := byAddress(rs)
	assert.JSONEq(t, `{"location": "westeurope", "properties": {"sku": {"name": "free"}, "state": "Enabled",
		"quota": {"maxRecurrence": {"frequency": "hour", "interval": 2}}}}`, string(got["azurerm_scheduler_job_collection.jobs"].Body))
	assert.Equal(t, "jobs", got["azurerm_scheduler_job.web"].Collection)
	assert.Equal(t, "http://default.example/run", member(t, got["azurerm_scheduler_job.local"].Body, "properties", "action", "request", "uri"))
	assert.Equal(t, []any{1.0}, member(t, got["azurerm_scheduler_job.web"].Body, "properties", "recurrence", "schedule", "hours"))

	// count and for_each are reported, not evaluated: no body, the names
	// only where they do not depend on the instance.
	counted, each := got["azurerm_scheduler_job.counted"], got["azurerm_scheduler_job.each"]
	assert.Nil(t, counted.Body)
	assert.Equal(t, "", counted.Job)
	assert.Equal(t, "jobs", counted.Collection)
	assert.Nil(t, each.Body)
	assert.Equal(t, "each", each.Job)
}

func TestReadVarsAndVarFiles(t *testing.T) {
	dir := filepath.Join("testdata", "vars")
	rs, err := Read([]string{dir}, Options{
		VarFiles: []string{filepath.Join(dir, "one.tfvars"), filepath.Join(dir, "two.tfvars")},
		Vars:     map[string]string{"url": "https://cli.example/run", "hours": "[3, 4]", "headers": `{ X-Trace = "on" }`},
	})
	require.NoError(t, err)
	got := byAddress(rs)
	web := got["azurerm_scheduler_job.web"]
	assert.Empty(t, web.Missing)
	assert.Equal(t, "from-one", web.ResourceGroup)
	// -var wins over the var files, a later var file over an earlier one.
	assert.JSONEq(t, `{"properties": {
		"action": {"type": "Https", "request": {"uri": "https://cli.example/run", "method": "Get", "headers": {"X-Trace": "on"}},
			"retryPolicy": {"retryType": "None"}},
		"recurrence": {"frequency": "day", "interval": 1, "schedule": {"hours": [3, 4]}}}}`, string(web.Body))
	assert.Equal(t, "https://two.example/run", member(t, got["azurerm_scheduler_job.local"].Body, "properties", "action", "request", "uri"))
	assert.Equal(t, "from-one", got["azurerm_scheduler_job_collection.jobs"].ResourceGroup)
}

func TestReadSet(t *testing.T) {
	rs, err := Read([]string{filepath.Join("testdata", "vars")}, Options{
		Vars: map[string]string{"url": "https://cli.example/run"},
		Set: map[string]string{
			"var.url":                   "https://set.example/run",
			"var.rg":                    "set-rg",
			"timestamp()":               "2020-01-01T00:00:00Z",
			`file("certs/missing.pfx")`: "pfx-bytes",
			"data.azurerm_key_vault_secret.pfx.value": "pfx-password",
		},
	})
	require.NoError(t, err)
	got := byAddress(rs)
	for _, address := range []string{"azurerm_scheduler_job.web", "azurerm_scheduler_job.local", "azurerm_scheduler_job.cert"} {
		assert.Empty(t, got[address].Missing, address)
		assert.Equal(t, "set-rg", got[address].ResourceGroup)
	}
	// --set wins over -var.
	assert.Equal(t, "https://set.example/run", member(t, got["azurerm_scheduler_job.web"].Body, "properties", "action", "request", "uri"))
	assert.Equal(t, "2020-01-01T00:00:00Z", member(t, got["azurerm_scheduler_job.local"].Body, "properties", "action", "request", "body"))
	assert.Equal(t, map[string]any{"type": "ClientCertificate", "pfx": "cGZ4LWJ5dGVz", "password": "pfx-password"},
		member(t, got["azurerm_scheduler_job.cert"].Body, "properties", "action", "request", "authentication"))
	assert.Len(t, got["azurerm_scheduler_job.counted"].Missing, 1, "--set does not make count evaluated")
}

// write writes a configuration of one file into a directory of its own.
func write(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		path := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
		require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	}
	return dir
}

const jobHead = `
resource "azurerm_scheduler_job" "j" {
  name                = "j"
  resource_group_name = "rg"
  job_collection_name = "c"
`

func TestReadEdges(t *testing.T) {
	for _, tc := range []struct {
		name    string
		files   map[string]string
		opts    Options
		missing []string
		want    string // a JSON body, when given
	}{{
		name: "binary file without base64encode",
		files: map[string]string{"main.tf": jobHead + `
  action_web {
    url = "https://x.example"
    body = file("blob.bin")
  }
}`, "blob.bin": "\xff\xfe"},
		missing: []string{`file("blob.bin")@action_web.body`},
	}, {
		name: "filebase64 of a file that is not there",
		files: map[string]string{"main.tf": jobHead + `
  action_web {
    url = "https://x.example"
    authentication_certificate {
      pfx      = filebase64("${path.module}/c.pfx")
      password = "p"
    }
  }
}`},
		missing: []string{`filebase64("./c.pfx")@action_web.authentication_certificate.pfx`},
	}, {
		name: "undeclared variable and an attribute the provider lacks",
		files: map[string]string{"main.tf": jobHead + `
  action_web {
    url = "${var.nowhere}"
    client_secret = "s"
  }
}`},
		missing: []string{"@action_web.client_secret", "var.nowhere@action_web.url"},
	}, {
		name: "locals that refer to each other",
		files: map[string]string{"main.tf": `
locals {
  a = "${local.b}"
  b = "${local.a}"
}` + jobHead + `
  action_web { url = local.a }
}`},
		missing: []string{"local.a@action_web.url"},
	}, {
		name: "a computed attribute, a module output, a whole resource",
		files: map[string]string{"main.tf": jobHead + `
  action_storage_queue {
    storage_account_name = module.storage.account
    storage_queue_name   = azurerm_storage_queue.q.id
    sas_token            = "${lower(azurerm_storage_account.a)}"
    message              = "m"
  }
}
resource "azurerm_storage_queue" "q" { name = "q" }`},
		missing: []string{
			"azurerm_storage_account.a@action_storage_queue.sas_token",
			"azurerm_storage_queue.q.id@action_storage_queue.storage_queue_name",
			"module.storage.account@action_storage_queue.storage_account_name",
		},
	}, {
		name: "0.11 map variable from -var, blocks as attributes, headers as a block",
		files: map[string]string{"main.tf": `
variable "h" { type = "map" }
variable "retry" { default = { interval = "00:01:00", count = 2 } }` + jobHead + `
  action_web {
    url = "https://x.example"
    method = "post"
    headers { Content-Type = "application/json" }
  }
  error_action_web = [{
    url = "https://x.example/err"
    headers = "${var.h}"
  }]
  retry = "${var.retry}"
  recurrence = {
    frequency = "Week"
    week_days = ["Monday"]
    end_time  = "2030-01-01T00:00:00Z"
  }
}`},
		opts: Options{Vars: map[string]string{"h": `{ "X-A" = "b" }`}},
		want: `{"properties": {"action": {"type": "Https",
			"request": {"uri": "https://x.example", "method": "post", "headers": {"Content-Type": "application/json"}},
			"retryPolicy": {"retryType": "Fixed", "retryInterval": "00:01:00", "retryCount": 2},
			"errorAction": {"type": "Https", "request": {"uri": "https://x.example/err", "method": "Get", "headers": {"X-A": "b"}}}},
			"recurrence": {"frequency": "Week", "interval": 1, "endTime": "2030-01-01T00:00:00Z", "schedule": {"weekDays": ["Monday"]}}}}`,
	}, {
		name: "two calls of one unknown function, one supplied",
		files: map[string]string{"main.tf": jobHead + `
  action_web {
    url  = "https://x.example/${md5("a")}"
    body = md5("b")
  }
}`},
		opts:    Options{Set: map[string]string{`md5("b")`: "bee"}},
		missing: []string{`md5("a")@action_web.url`},
	}, {
		name: "an expression recur cannot evaluate, supplied",
		files: map[string]string{"main.tf": `
variable "parts" { default = ["https://x.example"] }` + jobHead + `
  action_web {
    url  = var.parts[0]
    body = var.parts[5]
  }
}`},
		opts: Options{Set: map[string]string{"var.parts[5]": "five"}},
		want: `{"properties": {"action": {"type": "Https", "request": {"uri": "https://x.example", "method": "Get", "body": "five"},
			"retryPolicy": {"retryType": "None"}}}}`,
	}, {
		name: "a missing value of a branch not taken",
		files: map[string]string{"main.tf": `
variable "on" { default = true }` + jobHead + `
  action_web { url = var.on ? "https://x.example" : var.other }
}`},
		missing: []string{},
	}, {
		name: "a dynamic block",
		files: map[string]string{"main.tf": jobHead + `
  action_web { url = "https://x.example" }
  recurrence {
    frequency = "month"
    dynamic "monthly_occurrences" {
      for_each = [1, 3]
      content {
        day        = "sunday"
        occurrence = monthly_occurrences.value
      }
    }
  }
}`},
		missing: []string{"@recurrence.monthly_occurrences"},
	}, {
		name: "a resource without a name",
		files: map[string]string{"main.tf": `
resource "azurerm_scheduler_job_collection" "c" {
  resource_group_name = "rg"
  sku = "Standard"
}`},
		missing: []string{"azurerm_scheduler_job_collection.c.name@name"},
	}, {
		name: "terraform.tfvars and *.auto.tfvars",
		files: map[string]string{"main.tf": `
variable "url" {}
variable "method" {}` + jobHead + `
  action_web {
    url    = var.url
    method = var.method
  }
}`, "terraform.tfvars": "url = \"https://tfvars.example\"\nmethod = \"put\"\n", "b.auto.tfvars": `method = "post"`},
		want: `{"properties": {"action": {"type": "Https", "request": {"uri": "https://tfvars.example", "method": "post"},
			"retryPolicy": {"retryType": "None"}}}}`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			rs, err := Read([]string{write(t, tc.files)}, tc.opts)
			require.NoError(t, err)
			require.Len(t, rs, 1)
			if tc.missing != nil {
				assert.ElementsMatch(t, tc.missing, missing(rs)[rs[0].Source.Path])
			}
			if tc.want != "" {
				assert.Empty(t, rs[0].Missing)
				assert.JSONEq(t, tc.want, string(rs[0].Body))
			}
		})
	}
}

// TestReadDirectories reads two directories: two configurations, which
// may declare the same names.
func TestReadDirectories(t *testing.T) {
	config := func(url string) string {
		return `variable "url" { default = "` + url + `" }` + jobHead + `
  action_web { url = var.url }
}`
	}
	one, two := write(t, map[string]string{"main.tf": config("https://one.example")}), write(t, map[string]string{"main.tf": config("https://two.example")})
	rs, err := Read([]string{one, filepath.Join(two, "main.tf")}, Options{})
	require.NoError(t, err)
	require.Len(t, rs, 2)
	assert.ElementsMatch(t, []any{"https://one.example", "https://two.example"},
		[]any{member(t, rs[0].Body, "properties", "action", "request", "uri"), member(t, rs[1].Body, "properties", "action", "request", "uri")})
}

func TestReadErrors(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"a file that does not parse": {"main.tf": `resource "azurerm_scheduler_job" "j" {`},
		"a resource defined twice": {"a.tf": `resource "azurerm_scheduler_job" "j" {}`,
			"b.tf": `resource "azurerm_scheduler_job" "j" {}`},
		"a var file with a reference": {"main.tf": "", "terraform.tfvars": `a = var.b`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Read([]string{write(t, files)}, Options{})
			assert.Error(t, err)
		})
	}
	_, err := Read([]string{filepath.Join("testdata", "nowhere")}, Options{})
	assert.Error(t, err)
}

// TestReadResourceGroupOfAnotherResource reads resource_group_name from
// an azurerm_resource_group: one the files declare gives its name; one
// they do not is a Missing that --set supplies by the reference's name,
// as --resource-group does for every resource.
func TestReadResourceGroupOfAnotherResource(t *testing.T) {
	const job = `
resource "azurerm_scheduler_job" "j" {
  name                = "j"
  resource_group_name = azurerm_resource_group.main.name
  job_collection_name = "c"

  action_web {
    url = "https://x.example"
  }
}
`
	declared := write(t, map[string]string{"main.tf": job + `
resource "azurerm_resource_group" "main" {
  name     = "ops-${var.env}"
  location = "westeurope"
}

variable "env" {
  default = "prod"
}
`})
	rs, err := Read([]string{declared}, Options{})
	require.NoError(t, err)
	require.Len(t, rs, 1)
	assert.Empty(t, rs[0].Missing)
	assert.Equal(t, "ops-prod", rs[0].ResourceGroup)

	undeclared := write(t, map[string]string{"main.tf": job})
	rs, err = Read([]string{undeclared}, Options{})
	require.NoError(t, err)
	require.Len(t, rs, 1)
	assert.Empty(t, rs[0].ResourceGroup)
	require.Len(t, rs[0].Missing, 1)
	m := rs[0].Missing[0]
	assert.Equal(t, migrate.Missing{Name: "azurerm_resource_group.main.name", Path: "resource_group_name",
		Reason: "azurerm_resource_group.main is not in the files read (or give every resource its group with --resource-group)"}, m)
	assert.Contains(t, m.String(), "(supply it with --set 'azurerm_resource_group.main.name=VALUE')")

	for _, opts := range []Options{{Set: map[string]string{"azurerm_resource_group.main.name": "ops"}}, {ResourceGroup: "ops"}} {
		rs, err = Read([]string{undeclared}, opts)
		require.NoError(t, err)
		assert.Empty(t, rs[0].Missing, "%+v", opts)
		assert.Equal(t, "ops", rs[0].ResourceGroup, "%+v", opts)
	}
}

// TestReportsNameWhatHasNoName names a resource whose name is not known
// by its address, which the user finds in the files, not by a "/".
func TestReportsNameWhatHasNoName(t *testing.T) {
	dir := write(t, map[string]string{"main.tf": `
resource "azurerm_scheduler_job_collection" "ops" {
  name                = var.collection
  resource_group_name = "rg"
  location            = "westeurope"
  sku                 = "standard"
}

resource "azurerm_scheduler_job" "nightly" {
  name                = "nightly-${var.env}"
  resource_group_name = "rg"
  job_collection_name = azurerm_scheduler_job_collection.ops.name

  action_web {
    url = "https://x.example"
  }
}

resource "azurerm_scheduler_job" "weekly" {
  name                = "weekly"
  resource_group_name = "rg"
  job_collection_name = "ops"
  count               = 2

  action_web {
    url = "https://x.example"
  }
}

variable "collection" {}
variable "env" {}
`})
	rs, err := Read([]string{dir}, Options{})
	require.NoError(t, err)
	var names []string
	for _, r := range rs {
		require.NotEmpty(t, r.Missing, r.Source.Path)
		names = append(names, r.Name())
	}
	assert.Equal(t, []string{"azurerm_scheduler_job_collection.ops", "azurerm_scheduler_job.nightly", "ops/weekly"}, names)
}
