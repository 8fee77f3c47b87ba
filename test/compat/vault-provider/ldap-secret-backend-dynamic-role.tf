# vault_ldap_secret_backend_dynamic_role, from the provider's documentation, against the harness's
# slapd.
# needs: ldap
# import: vault_ldap_secret_backend_dynamic_role.role ldap-dynamic/role/alice
# import-ignore: mount, role_name
variable "ldap_url" {}
variable "ldap_binddn" {}
variable "ldap_bindpass" { sensitive = true }
variable "ldap_userdn" {}

resource "vault_ldap_secret_backend" "config" {
  path         = "ldap-dynamic"
  binddn       = var.ldap_binddn
  bindpass     = var.ldap_bindpass
  url          = var.ldap_url
  insecure_tls = "true"
  userdn       = var.ldap_userdn
}

resource "vault_ldap_secret_backend_dynamic_role" "role" {
  mount         = vault_ldap_secret_backend.config.path
  role_name     = "alice"
  creation_ldif = <<EOT
dn: cn={{.Username}},ou=users,dc=learn,dc=example
objectClass: person
objectClass: top
cn: learn
sn: {{ random 20 }}
memberOf: cn=dev,ou=groups,dc=learn,dc=example
userPassword: {{.Password}}
EOT
  deletion_ldif = <<EOT
dn: cn={{.Username}},ou=users,dc=learn,dc=example
changetype: delete
EOT
  rollback_ldif = <<EOT
dn: cn={{.Username}},ou=users,dc=learn,dc=example
changetype: delete
EOT
}
