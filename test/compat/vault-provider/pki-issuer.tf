# vault_pki_secret_backend_issuer (resource and data sources vault_pki_secret_backend_issuer(s)), from the provider's documentation.
# import: vault_pki_secret_backend_issuer.example
resource "vault_mount" "pki" {
  path                      = "pki-issuer"
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

data "vault_pki_secret_backend_issuer" "example" {
  backend    = vault_pki_secret_backend_issuer.example.backend
  issuer_ref = vault_pki_secret_backend_issuer.example.issuer_id
}

data "vault_pki_secret_backend_issuers" "all" {
  backend = vault_pki_secret_backend_issuer.example.backend
}
