# vault_transit_secret_cache_config, from the provider's documentation.
resource "vault_mount" "transit" {
  path                      = "transit-cache"
  type                      = "transit"
  description               = "Example description"
  default_lease_ttl_seconds = 3600
  max_lease_ttl_seconds     = 86400
}

resource "vault_transit_secret_cache_config" "cfg" {
  backend = vault_mount.transit.path
  size    = 500
}
