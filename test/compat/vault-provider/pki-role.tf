# vault_pki_secret_backend_role, from the provider's documentation (at its own path: the dev server mounts `pki`).
# import: vault_pki_secret_backend_role.role pki-role/roles/example
resource "vault_mount" "pki" {
  path                      = "pki-role"
  type                      = "pki"
  default_lease_ttl_seconds = 3600
  max_lease_ttl_seconds     = 86400
}

resource "vault_pki_secret_backend_role" "role" {
  backend          = vault_mount.pki.path
  name             = "example"
  ttl              = 3600
  allow_ip_sans    = true
  key_type         = "rsa"
  key_bits         = 4096
  allowed_domains  = ["example.com", "my.domain"]
  allow_subdomains = true
}
