# The vault_transit_encrypt and vault_transit_decrypt data sources, from the provider's documentation
# (the decryption of the encryption's ciphertext: the example's ciphertext is another key's).
resource "vault_mount" "test" {
  path        = "transit-data"
  type        = "transit"
  description = "This is an example mount"
}

resource "vault_transit_secret_backend_key" "test" {
  backend          = vault_mount.test.path
  name             = "test"
  deletion_allowed = true
}

data "vault_transit_encrypt" "test" {
  backend   = vault_mount.test.path
  key       = vault_transit_secret_backend_key.test.name
  plaintext = "foobar"
}

data "vault_transit_decrypt" "test" {
  backend    = vault_mount.test.path
  key        = vault_transit_secret_backend_key.test.name
  ciphertext = data.vault_transit_encrypt.test.ciphertext
}
