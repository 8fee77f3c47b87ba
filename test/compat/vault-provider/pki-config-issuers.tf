# vault_pki_secret_backend_config_issuers, from the provider's documentation.
# import: vault_pki_secret_backend_config_issuers.config pki-config-issuers/config/issuers
resource "vault_mount" "pki" {
  path                      = "pki-config-issuers"
  type                      = "pki"
  default_lease_ttl_seconds = 3600
  max_lease_ttl_seconds     = 86400
}

resource "vault_pki_secret_backend_root_cert" "root" {
  backend     = vault_mount.pki.path
  type        = "internal"
  common_name = "test"
  ttl         = "86400"
}

resource "vault_pki_secret_backend_issuer" "example" {
  backend     = vault_pki_secret_backend_root_cert.root.backend
  issuer_ref  = vault_pki_secret_backend_root_cert.root.issuer_id
  issuer_name = "example-issuer"
}

resource "vault_pki_secret_backend_config_issuers" "config" {
  backend                       = vault_mount.pki.path
  default                       = vault_pki_secret_backend_issuer.example.issuer_id
  default_follows_latest_issuer = true
}
