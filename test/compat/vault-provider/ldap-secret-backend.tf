# vault_ldap_secret_backend, from the provider's documentation, against the harness's slapd
# (rotation_schedule/rotation_window, scheduled root rotation of the enterprise edition, dropped).
# needs: ldap
# The import ID is the mount path: the provider reads <id>/config (its documentation says <mount>/config).
# import: vault_ldap_secret_backend.config my-custom-ldap
# import-ignore: bindpass, connection_timeout, description, disable_remount
variable "ldap_url" {}
variable "ldap_binddn" {}
variable "ldap_bindpass" { sensitive = true }
variable "ldap_userdn" {}

resource "vault_ldap_secret_backend" "config" {
  path         = "my-custom-ldap"
  binddn       = var.ldap_binddn
  bindpass     = var.ldap_bindpass
  url          = var.ldap_url
  insecure_tls = "true"
  userdn       = var.ldap_userdn
}
