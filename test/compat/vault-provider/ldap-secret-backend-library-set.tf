# vault_ldap_secret_backend_library_set, from the provider's documentation, against the harness's
# slapd.
# needs: ldap
# import: vault_ldap_secret_backend_library_set.qa ldap-library/library/qa
# import-ignore: mount, name
variable "ldap_url" {}
variable "ldap_binddn" {}
variable "ldap_bindpass" { sensitive = true }
variable "ldap_userdn" {}

resource "vault_ldap_secret_backend" "config" {
  path         = "ldap-library"
  binddn       = var.ldap_binddn
  bindpass     = var.ldap_bindpass
  url          = var.ldap_url
  insecure_tls = "true"
  userdn       = var.ldap_userdn
}

resource "vault_ldap_secret_backend_library_set" "qa" {
  mount                        = vault_ldap_secret_backend.config.path
  name                         = "qa"
  service_account_names        = ["Bob", "Mary"]
  ttl                          = 60
  disable_check_in_enforcement = true
  max_ttl                      = 120
}
