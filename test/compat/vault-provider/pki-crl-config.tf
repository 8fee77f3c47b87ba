# vault_pki_secret_backend_crl_config, from the provider's documentation (the mount's name must not end
# in letters of "/config/crl": on import the provider trims them as a set, strings.TrimRight).
# import: vault_pki_secret_backend_crl_config.crl_config pki-crls/config/crl
resource "vault_mount" "pki" {
  path                      = "pki-crls"
  type                      = "pki"
  default_lease_ttl_seconds = 3600
  max_lease_ttl_seconds     = 86400
}

resource "vault_pki_secret_backend_crl_config" "crl_config" {
  backend = vault_mount.pki.path
  expiry  = "72h"
  disable = false
}
