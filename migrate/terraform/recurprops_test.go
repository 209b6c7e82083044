package terraform

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/migrate"
)

// TestReadRecurProperties reads recur_properties written by hand: merged
// into the properties the azurerm attributes make, object by object; null
// removes; a list or any other value replaces; variables, locals and
// functions evaluate in it as anywhere.
func TestReadRecurProperties(t *testing.T) {
	dir := write(t, map[string]string{"main.tf": `
variable "sas_key" {
  type      = string
  sensitive = true
}

locals {
  zone = "Europe/Berlin"
}

resource "azurerm_scheduler_job_collection" "c" {
  name                = "c"
  resource_group_name = "rg"
  location            = "westeurope"
  state               = "Enabled"

  quota {
    max_job_count = 10
  }

  recur_properties = {
    state = null
    quota = { maxJobOccurrence = 5 }
  }
}

resource "azurerm_scheduler_job" "web" {
  name                = "web"
  resource_group_name = "rg"
  job_collection_name = azurerm_scheduler_job_collection.c.name

  action_web {
    url     = "https://example.com"
    headers = { "Content-Type" = "text/plain" }
  }

  recurrence {
    frequency = "day"
    hours     = [1, 2]
  }

  recur_properties = {
    overlapPolicy = "AllowAll"
    action = {
      retryPolicy = null
      timeout     = "PT${2 * 30}S"
      request     = { headers = { X-Trace = "on" }, successStatusCodes = [200, "3xx"] }
    }
    recurrence = {
      timeZone = local.zone
      schedule = { hours = [3] }
    }
  }
}

resource "azurerm_scheduler_job" "bus" {
  name                = "bus"
  resource_group_name = "rg"
  job_collection_name = "c"

  recur_properties = {
    action = {
      type = "ServiceBusQueue"
      serviceBusQueueMessage = {
        namespace      = "my-bus"
        queueName      = "q"
        message        = upper("m")
        authentication = { sasKeyName = "send", sasKey = var.sas_key }
        brokeredMessageProperties = { label = null }
      }
    }
  }
}
`})
	rs, err := Read([]string{dir}, Options{Vars: map[string]string{"sas_key": "key"}})
	require.NoError(t, err)
	got := byAddress(rs)
	for _, r := range rs {
		assert.Empty(t, r.Missing, r.Source.Path)
	}
	assert.JSONEq(t, `{"location": "westeurope", "properties": {"quota": {"maxJobCount": 10, "maxJobOccurrence": 5}}}`,
		string(got["azurerm_scheduler_job_collection.c"].Body))
	assert.JSONEq(t, `{"properties": {"overlapPolicy": "AllowAll",
		"action": {"type": "Https", "timeout": "PT60S",
			"request": {"uri": "https://example.com", "method": "Get", "successStatusCodes": [200, "3xx"],
				"headers": {"Content-Type": "text/plain", "X-Trace": "on"}}},
		"recurrence": {"frequency": "day", "interval": 1, "timeZone": "Europe/Berlin", "schedule": {"hours": [3]}}}}`,
		string(got["azurerm_scheduler_job.web"].Body))
	// An object that meets no object is taken whole, its nulls kept.
	assert.JSONEq(t, `{"properties": {"action": {"type": "ServiceBusQueue", "serviceBusQueueMessage": {
		"namespace": "my-bus", "queueName": "q", "message": "M",
		"authentication": {"sasKeyName": "send", "sasKey": "key"}, "brokeredMessageProperties": {"label": null}}}}}`,
		string(got["azurerm_scheduler_job.bus"].Body))

	rs, err = Read([]string{dir}, Options{})
	require.NoError(t, err)
	assert.Equal(t, []string{"var.sas_key@recur_properties"}, missing(rs)["azurerm_scheduler_job.bus"])
}

func TestReadRecurPropertiesMisused(t *testing.T) {
	rs, err := Read([]string{write(t, map[string]string{"main.tf": jobHead + `
  recur_properties = ["overlapPolicy"]
}

resource "azurerm_scheduler_job" "block" {
  name                = "block"
  resource_group_name = "rg"
  job_collection_name = "c"

  recur_properties {
    overlapPolicy = "Skip"
  }
}`})}, Options{})
	require.NoError(t, err)
	assert.Equal(t, map[string][]string{
		"azurerm_scheduler_job.j":     {"@recur_properties"},
		"azurerm_scheduler_job.block": {"@recur_properties"},
	}, missing(rs))
}

// TestReadRecurPropertiesRecurHasNot: a member of recur_properties that
// recur's API does not have is left out of the body with a warning naming
// it and what it probably meant, not refused with the whole job.
func TestReadRecurPropertiesRecurHasNot(t *testing.T) {
	rs, err := Read([]string{write(t, map[string]string{"main.tf": jobHead + `
  recur_properties = {
    overlapPolicy = "Skip"
    overlapPolicyy = "Skip"
    action = { request = { retryPolicy = { retryType = "None" } } }
  }
}`})}, Options{})
	require.NoError(t, err)
	require.Len(t, rs, 1)
	assert.Equal(t, []migrate.Warning{
		{Path: "properties.action.request.retryPolicy", Message: "recur import ignores this; did you mean properties.action.retryPolicy?"},
		{Path: "properties.overlapPolicyy", Message: "recur import ignores this; did you mean properties.overlapPolicy?"},
	}, rs[0].Warnings)
	assert.NotContains(t, string(rs[0].Body), "overlapPolicyy")
	assert.NotContains(t, string(rs[0].Body), "retryType")
	assert.Contains(t, string(rs[0].Body), `"overlapPolicy":"Skip"`)
	assert.NoError(t, jobs.CheckMembers(rs[0].Body, reflect.TypeFor[jobs.Job]()))
}
