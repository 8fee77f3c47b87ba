# vault_transit_secret_backend_key, from the provider's documentation (its derived, convergent key).
# import: vault_transit_secret_backend_key.derived_key transit-derived/keys/derived_key
# import-ignore: context
resource "vault_mount" "transit" {
  path = "transit-derived"
  type = "transit"
}

resource "vault_transit_secret_backend_key" "derived_key" {
  backend               = vault_mount.transit.path
  name                  = "derived_key"
  derived               = true
  convergent_encryption = true
  context               = "dGVzdGNvbnRleHQ=" # base64 encoded "testcontext"
  deletion_allowed      = true
}
