# vault_transit_secret_backend_key, from the provider's documentation (its derived, convergent key).
# No import check: `context` is given only when the key is created and no read returns it, so an
# imported derived key plans its replacement against the public service too.
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
