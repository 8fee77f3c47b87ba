# vault_identity_group_alias, from the provider's documentation, on a JWT method (Hangar has no
# github method).
# import: vault_identity_group_alias.group-alias
resource "vault_identity_group" "group" {
  name     = "test"
  type     = "external"
  policies = ["test"]
}

resource "vault_auth_backend" "github" {
  type = "jwt"
  path = "group-alias-jwt"
}

resource "vault_identity_group_alias" "group-alias" {
  name           = "Github_Team_Slug"
  mount_accessor = vault_auth_backend.github.accessor
  canonical_id   = vault_identity_group.group.id
}
