# vault_jwt_auth_backend_role, from the provider's documentation (its two examples, JWT and OIDC
# roles), each method at its own path and with jwt_validation_pubkeys (the provider refuses a
# backend without one of its key sources before any request).
# The keys are trimmed (trimspace): the public service trims every item of a comma-string list, so a
# heredoc's final newline would read back without it there too and plan a change.
# import: vault_jwt_auth_backend_role.example auth/jwt-roles/role/test-role
# import: vault_jwt_auth_backend_role.oidc_example auth/oidc-roles/role/test-role
resource "vault_jwt_auth_backend" "jwt" {
  path = "jwt-roles"
  jwt_validation_pubkeys = [trimspace(<<EOT
-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEZkDaJIg5h5GQLguNgGU/WM5dRaYp
7gF0zZRKUL95Dup93P49jzBdvn95wbfz5He3f+QbDAgQcqgJogjGad3akQ==
-----END PUBLIC KEY-----
EOT
  )]
}

resource "vault_jwt_auth_backend_role" "example" {
  backend        = vault_jwt_auth_backend.jwt.path
  role_name      = "test-role"
  token_policies = ["default", "dev", "prod"]

  bound_audiences = ["https://myco.test"]
  bound_claims = {
    color = "red,green,blue"
  }
  user_claim = "https://vault/user"
  role_type  = "jwt"
}

resource "vault_jwt_auth_backend" "oidc" {
  path         = "oidc-roles"
  type         = "oidc"
  default_role = "test-role"
  jwt_validation_pubkeys = [trimspace(<<EOT
-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEZkDaJIg5h5GQLguNgGU/WM5dRaYp
7gF0zZRKUL95Dup93P49jzBdvn95wbfz5He3f+QbDAgQcqgJogjGad3akQ==
-----END PUBLIC KEY-----
EOT
  )]
}

resource "vault_jwt_auth_backend_role" "oidc_example" {
  backend        = vault_jwt_auth_backend.oidc.path
  role_name      = "test-role"
  token_policies = ["default", "dev", "prod"]

  user_claim            = "https://vault/user"
  role_type             = "oidc"
  allowed_redirect_uris = ["http://localhost:8200/ui/vault/auth/oidc/oidc/callback"]
}
