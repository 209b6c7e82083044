# Terraform 0.11 syntax, in the shape of the azurerm provider's
# examples/scheduler-jobs.

variable "resource_group_name" {
  type        = "string"
  description = "Name of the azurerm resource group."
  default     = "tfex-job_collection"
}

variable "resource_group_location" {
  type        = "string"
  description = "Location of the azurerm resource group."
  default     = "West US"
}

variable "hours" {
  type    = "list"
  default = [0, 12]
}
