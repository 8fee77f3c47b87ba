# vault_ad_secret_backend, from the provider's documentation, against the harness's slapd (at its
# own path: the dev server mounts `ad`).
# needs: ldap
# import: vault_ad_secret_backend.config ad-backend
# import-ignore: bindpass, description, disable_remount
variable "ldap_url" {}
variable "ldap_binddn" {}
variable "ldap_bindpass" { sensitive = true }
variable "ldap_userdn" {}

resource "vault_ad_secret_backend" "config" {
  backend      = "ad-backend"
  binddn       = var.ldap_binddn
  bindpass     = var.ldap_bindpass
  url          = var.ldap_url
  insecure_tls = "true"
  userdn       = var.ldap_userdn
}
