resource "azurerm_scheduler_job_collection" "jobs" {
  name                = var.collection
  resource_group_name = var.rg
  location            = "westeurope"
  sku                 = "free"

  quota {
    max_recurrence_frequency = "hour"
    max_retry_interval       = 2
  }
}

resource "azurerm_scheduler_job" "web" {
  name                = "web"
  resource_group_name = var.rg
  job_collection_name = azurerm_scheduler_job_collection.jobs.name

  action_web {
    url     = var.url
    headers = var.headers
  }

  recurrence {
    frequency = "day"
    hours     = var.hours
  }
}

resource "azurerm_scheduler_job" "local" {
  name                = "local"
  resource_group_name = var.rg
  job_collection_name = azurerm_scheduler_job_collection.jobs.name

  action_web {
    url  = local.target
    body = timestamp()
  }
}

resource "azurerm_scheduler_job" "cert" {
  name                = "cert"
  resource_group_name = var.rg
  job_collection_name = azurerm_scheduler_job_collection.jobs.name

  action_web {
    url = "https://cert.example"

    authentication_certificate {
      pfx      = "${base64encode(file("certs/missing.pfx"))}"
      password = "${data.azurerm_key_vault_secret.pfx.value}"
    }
  }
}

resource "azurerm_scheduler_job" "counted" {
  count               = 2
  name                = "counted-${count.index}"
  resource_group_name = var.rg
  job_collection_name = azurerm_scheduler_job_collection.jobs.name

  action_web {
    url = "https://counted.example"
  }
}

resource "azurerm_scheduler_job" "each" {
  for_each            = toset(["a", "b"])
  name                = "each"
  resource_group_name = var.rg
  job_collection_name = azurerm_scheduler_job_collection.jobs.name

  action_web {
    url = "https://each.example/${each.key}"
  }
}
