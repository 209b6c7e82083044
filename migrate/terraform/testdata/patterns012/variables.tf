variable "prefix" {
  type    = string
  default = "pat"
}

variable "location" {
  type    = string
  default = "North Europe"
}

variable "tenant" {
  type    = string
  default = "contoso.onmicrosoft.com"
}

variable "billing_password" {
  type      = string
  sensitive = true
}

variable "pfx_password" {
  type      = string
  sensitive = true
}

variable "alerts_secret" {
  type      = string
  sensitive = true
}

variable "errors_sas" {
  type      = string
  sensitive = true
}

variable "work_sas" {
  type      = string
  sensitive = true
}
