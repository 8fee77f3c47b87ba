# vault_identity_group, from the provider's documentation (its internal
# and external groups).
# import: vault_identity_group.internal
# import: vault_identity_group.group
resource "vault_identity_group" "internal" {
  name     = "internal"
  type     = "internal"
  policies = ["dev", "test"]

  metadata = {
    version = "2"
  }
}

resource "vault_identity_group" "group" {
  name     = "external"
  type     = "external"
  policies = ["test"]

  metadata = {
    version = "1"
  }
}
