# vault_transform_role, from the provider's documentation.
# import: vault_transform_role.test
resource "vault_mount" "mount_transform" {
  path = "transform-role"
  type = "transform"
}

resource "vault_transform_role" "test" {
  path            = vault_mount.mount_transform.path
  name            = "payments"
  transformations = ["ccn-fpe"]
}
