# The configuration of ../azurerm011 in Terraform 0.12 syntax.

variable "resource_group_name" {
  type        = string
  description = "Name of the azurerm resource group."
  default     = "tfex-job_collection"
}

variable "resource_group_location" {
  type        = string
  description = "Location of the azurerm resource group."
  default     = "West US"
}

variable "hours" {
  type    = list(number)
  default = [0, 12]
}
