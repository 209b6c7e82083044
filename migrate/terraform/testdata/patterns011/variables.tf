variable "prefix" {
  type    = "string"
  default = "pat"
}

variable "location" {
  type    = "string"
  default = "North Europe"
}

variable "tenant" {
  default = "contoso.onmicrosoft.com"
}

variable "billing_password" {}

variable "pfx_password" {}

variable "alerts_secret" {}

variable "errors_sas" {}

variable "work_sas" {}
