# vault_transform_alphabet, from the provider's documentation (the mount at its own path: the dev
# server mounts `transform`).
# import: vault_transform_alphabet.test
resource "vault_mount" "mount_transform" {
  path = "transform-alphabet"
  type = "transform"
}

resource "vault_transform_alphabet" "test" {
  path     = vault_mount.mount_transform.path
  name     = "numerics"
  alphabet = "0123456789"
}
