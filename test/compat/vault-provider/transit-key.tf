# vault_transit_secret_backend_key, from the provider's documentation (its first example), with
# deletion_allowed = true: the provider deletes the key without setting it, which the public service
# refuses too ("deletion is not allowed for this key").
# import: vault_transit_secret_backend_key.key transit-keys/keys/my_key
resource "vault_mount" "transit" {
  path                      = "transit-keys"
  type                      = "transit"
  description               = "Example description"
  default_lease_ttl_seconds = 3600
  max_lease_ttl_seconds     = 86400
}

resource "vault_transit_secret_backend_key" "key" {
  backend = vault_mount.transit.path
  name    = "my_key"

  deletion_allowed = true
}
