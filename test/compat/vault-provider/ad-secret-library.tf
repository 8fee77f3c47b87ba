# vault_ad_secret_library, from the provider's documentation, against the harness's slapd.
# needs: ldap
# import: vault_ad_secret_library.qa ad-library/library/qa
variable "ldap_url" {}
variable "ldap_binddn" {}
variable "ldap_bindpass" { sensitive = true }
variable "ldap_userdn" {}

resource "vault_ad_secret_backend" "config" {
  backend      = "ad-library"
  binddn       = var.ldap_binddn
  bindpass     = var.ldap_bindpass
  url          = var.ldap_url
  insecure_tls = "true"
  userdn       = var.ldap_userdn
}

resource "vault_ad_secret_library" "qa" {
  backend                      = vault_ad_secret_backend.config.backend
  name                         = "qa"
  service_account_names        = ["Bob", "Mary"]
  ttl                          = 60
  disable_check_in_enforcement = true
  max_ttl                      = 120
}
