# vault_token_auth_backend_role, from the provider's documentation.
# import: vault_token_auth_backend_role.example auth/token/roles/my-role
resource "vault_token_auth_backend_role" "example" {
  role_name              = "my-role"
  allowed_policies       = ["dev", "test"]
  disallowed_policies    = ["default"]
  allowed_entity_aliases = ["test_entity"]
  orphan                 = true
  token_period           = "86400"
  renewable              = true
  token_explicit_max_ttl = "115200"
  path_suffix            = "path-suffix"
}
