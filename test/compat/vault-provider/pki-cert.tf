# vault_pki_secret_backend_cert, from the provider's documentation, with the mount, root and role it names.

resource "vault_mount" "intermediate" {
  path                      = "pki-cert"
  type                      = "pki"
  default_lease_ttl_seconds = 3600
  max_lease_ttl_seconds     = 86400
}

resource "vault_pki_secret_backend_root_cert" "root" {
  backend     = vault_mount.intermediate.path
  type        = "internal"
  common_name = "my.domain"
  ttl         = "86400"
}

resource "vault_pki_secret_backend_role" "test" {
  depends_on       = [vault_pki_secret_backend_root_cert.root]
  backend          = vault_mount.intermediate.path
  name             = "test"
  allowed_domains  = ["my.domain"]
  allow_subdomains = true
}

resource "vault_pki_secret_backend_cert" "app" {
  depends_on = [vault_pki_secret_backend_role.test]

  backend = vault_mount.intermediate.path
  name    = vault_pki_secret_backend_role.test.name

  common_name = "app.my.domain"
}
