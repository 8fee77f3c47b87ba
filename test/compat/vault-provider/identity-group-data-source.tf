# The vault_identity_group data source, from the provider's documentation, on a group of the
# vault_identity_group documentation.
resource "vault_identity_group" "internal" {
  name     = "internal-lookup"
  type     = "internal"
  policies = ["dev", "test"]

  metadata = {
    version = "2"
  }
}

data "vault_identity_group" "group" {
  group_name = vault_identity_group.internal.name
}
