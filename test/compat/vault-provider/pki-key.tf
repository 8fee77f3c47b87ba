# vault_pki_secret_backend_key (resource and data sources vault_pki_secret_backend_key(s)), from the
# provider's documentation (its `mount` is `backend` in the provider's schema).
# import: vault_pki_secret_backend_key.key
# import-ignore: type, key_bits
resource "vault_mount" "pki" {
  path                      = "pki-key"
  type                      = "pki"
  default_lease_ttl_seconds = 3600
  max_lease_ttl_seconds     = 86400
}

resource "vault_pki_secret_backend_key" "key" {
  backend  = vault_mount.pki.path
  type     = "exported"
  key_name = "example-key"
  key_type = "rsa"
  key_bits = "2048"
}

data "vault_pki_secret_backend_key" "example" {
  backend = vault_pki_secret_backend_key.key.backend
  key_ref = vault_pki_secret_backend_key.key.key_id
}

data "vault_pki_secret_backend_keys" "all" {
  backend = vault_pki_secret_backend_key.key.backend
}
