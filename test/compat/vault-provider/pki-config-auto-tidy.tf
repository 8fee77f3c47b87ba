# vault_pki_secret_backend_config_auto_tidy, from the provider's documentation.
# import: vault_pki_secret_backend_config_auto_tidy.test pki-auto-tidy/config/auto-tidy
# known-failure: sys/seal-status reports version 0.1.0: the provider refuses (min version 1.12.0); <pki>/config/auto-tidy is also 404 "unsupported path"
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
