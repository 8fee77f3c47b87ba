# vault_ad_secret_role, from the provider's documentation, against the harness's slapd.
# needs: ldap
# import: vault_ad_secret_role.role ad-roles/roles/bob
variable "ldap_url" {}
variable "ldap_binddn" {}
variable "ldap_bindpass" { sensitive = true }
variable "ldap_userdn" {}

resource "vault_ad_secret_backend" "config" {
  backend      = "ad-roles"
  binddn       = var.ldap_binddn
  bindpass     = var.ldap_bindpass
  url          = var.ldap_url
  insecure_tls = "true"
  userdn       = var.ldap_userdn
}

resource "vault_ad_secret_role" "role" {
  backend              = vault_ad_secret_backend.config.backend
  role                 = "bob"
  service_account_name = "Bob"
  ttl                  = 60
}
