# vault_pki_secret_backend_config_urls, from the provider's documentation.
# import: vault_pki_secret_backend_config_urls.example pki-urls/config/urls
resource "vault_mount" "root" {
  path                      = "pki-urls"
  type                      = "pki"
  description               = "root PKI"
  default_lease_ttl_seconds = 8640000
  max_lease_ttl_seconds     = 8640000
}

resource "vault_pki_secret_backend_config_urls" "example" {
  backend = vault_mount.root.path
  issuing_certificates = [
    "http://127.0.0.1:8200/v1/pki/ca",
  ]
}
