# Values from outside the files: -var, var files, --set, and what is
# Missing without them.

variable "rg" {}

variable "collection" {
  default = "jobs"
}

variable "url" {}

variable "base" {
  default = "http://default.example"
}

variable "hours" {
  type    = "list"
  default = [1]
}

variable "headers" {
  type    = map(string)
  default = {}
}

locals {
  target = "${var.base}/run"
}
