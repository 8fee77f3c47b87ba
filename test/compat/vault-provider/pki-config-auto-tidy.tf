# vault_pki_secret_backend_config_auto_tidy, from the provider's documentation.
# import: vault_pki_secret_backend_config_auto_tidy.test pki-auto-tidy/config/auto-tidy
resource "vault_mount" "pki" {
  path                      = "pki-auto-tidy"
  type                      = "pki"
  default_lease_ttl_seconds = 3600
  max_lease_ttl_seconds     = 86400
}

resource "vault_pki_secret_backend_config_auto_tidy" "test" {
  backend           = vault_mount.pki.path
  enabled           = true
  tidy_cert_store   = true
  interval_duration = "1h"
}
