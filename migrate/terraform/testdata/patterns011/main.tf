# Terraform 0.11 syntax, written for recur's tests in the patterns that
# configurations of the azurerm 1.x scheduler resources used: blocks
# written as attributes (action_web = { ... }, error_action_storage_queue
# = { ... }, retry = { ... }, quota = { ... }), monthly_occurrences as a
# list of maps, a client certificate read with base64encode(file()),
# "${}" interpolation everywhere and values from terraform.tfvars.

resource "azurerm_resource_group" "jobs" {
  name     = "${var.prefix}-jobs"
  location = "${var.location}"
}

resource "azurerm_scheduler_job_collection" "main" {
  name                = "${var.prefix}-collection"
  location            = "${azurerm_resource_group.jobs.location}"
  resource_group_name = "${azurerm_resource_group.jobs.name}"
  sku                 = "standard"

  quota = {
    max_job_count            = 20
    max_recurrence_frequency = "hour"
    max_recurrence_interval  = 1
  }
}

resource "azurerm_scheduler_job" "billing" {
  name                = "billing-export"
  resource_group_name = "${azurerm_resource_group.jobs.name}"
  job_collection_name = "${azurerm_scheduler_job_collection.main.name}"

  action_web = {
    url    = "https://billing.example.com/export"
    method = "post"
    body   = "{\"period\":\"last-month\"}"

    headers = {
      Content-Type = "application/json"
    }

    authentication_basic = {
      username = "scheduler"
      password = "${var.billing_password}"
    }
  }

  retry = {
    interval = "00:01:00"
    count    = 3
  }

  error_action_storage_queue = {
    storage_account_name = "${var.prefix}errors"
    storage_queue_name   = "billing-failures"
    sas_token            = "${var.errors_sas}"
    message              = "billing export failed"
  }

  recurrence = {
    frequency = "month"
    count     = 24

    monthly_occurrences = [
      {
        day        = "Monday"
        occurrence = 1
      },
      {
        day        = "Friday"
        occurrence = -1
      },
    ]
  }

  start_time = "2030-01-01T06:00:00Z"
}

resource "azurerm_scheduler_job" "partner" {
  name                = "partner-sync"
  resource_group_name = "${azurerm_resource_group.jobs.name}"
  job_collection_name = "${azurerm_scheduler_job_collection.main.name}"
  state               = "enabled"

  action_web = {
    url    = "https://partner.example.com/sync"
    method = "put"

    authentication_certificate = {
      pfx      = "${base64encode(file("client.pfx"))}"
      password = "${var.pfx_password}"
    }
  }

  error_action_web = {
    url    = "https://ops.example.com/alerts"
    method = "post"
    body   = "partner sync failed"

    authentication_active_directory = {
      tenant_id = "${var.tenant}"
      client_id = "00000000-0000-0000-0000-0000000000aa"
      secret    = "${var.alerts_secret}"
    }
  }

  recurrence = {
    frequency = "week"
    interval  = 2
    week_days = ["Tuesday", "Thursday"]
    hours     = [7, 19]
    minutes   = [30]
  }

  start_time = "2030-01-02T07:30:00Z"
}

resource "azurerm_scheduler_job" "drain" {
  name                = "queue-drain"
  resource_group_name = "${azurerm_resource_group.jobs.name}"
  job_collection_name = "${azurerm_scheduler_job_collection.main.name}"

  action_storage_queue = {
    storage_account_name = "${var.prefix}work"
    storage_queue_name   = "drain"
    sas_token            = "${var.work_sas}"
    message              = "${upper("drain")}"
  }

  recurrence = {
    frequency  = "month"
    month_days = [1, 15, -1]
    end_time   = "2031-12-31T00:00:00Z"
  }

  start_time = "2030-01-01T00:00:00Z"
}
