# vault_ldap_secret_backend_static_role, from the provider's documentation, against the harness's
# slapd (alice's DN under its users).
# needs: ldap
# import: vault_ldap_secret_backend_static_role.role ldap-static/static-role/alice
# import-ignore: mount, role_name, skip_import_rotation
variable "ldap_url" {}
variable "ldap_binddn" {}
variable "ldap_bindpass" { sensitive = true }
variable "ldap_userdn" {}

resource "vault_ldap_secret_backend" "config" {
  path         = "ldap-static"
  binddn       = var.ldap_binddn
  bindpass     = var.ldap_bindpass
  url          = var.ldap_url
  insecure_tls = "true"
  userdn       = var.ldap_userdn
}

resource "vault_ldap_secret_backend_static_role" "role" {
  mount           = vault_ldap_secret_backend.config.path
  username        = "alice"
  dn              = "cn=alice,${var.ldap_userdn}"
  role_name       = "alice"
  rotation_period = 60
}
