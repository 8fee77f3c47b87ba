# vault_auth_backend (resource and data source), from the provider's documentation, with the JWT
# method (Hangar has no github method) at its own path.
# import: vault_auth_backend.example jwt-tune
# import-ignore: disable_remount, tune
resource "vault_auth_backend" "example" {
  type = "jwt"
  path = "jwt-tune"

  tune {
    max_lease_ttl      = "90000s"
    listing_visibility = "unauth"
  }
}

data "vault_auth_backend" "example" {
  path = vault_auth_backend.example.path
}
