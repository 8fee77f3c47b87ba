# vault_identity_group_policies, from the provider's documentation (its exclusive example).
resource "vault_identity_group" "internal" {
  name = "internal-policies"
  type = "internal"

  external_policies = true

  metadata = {
    version = "2"
  }
}

resource "vault_identity_group_policies" "policies" {
  policies = [
    "default",
    "test",
  ]

  exclusive = true

  group_id = vault_identity_group.internal.id
}
