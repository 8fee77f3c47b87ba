# vault_jwt_auth_backend, from the provider's documentation, with jwt_validation_pubkeys instead of
# oidc_discovery_url (no network in tests).
# The keys are trimmed (trimspace): the public service trims every item of a comma-string list, so a
# heredoc's final newline would read back without it there too and plan a change.
# import: vault_jwt_auth_backend.example jwt-provider
# import-ignore: description, disable_remount, tune
resource "vault_jwt_auth_backend" "example" {
  description  = "Demonstration of the Terraform JWT auth backend"
  path         = "jwt-provider"
  bound_issuer = "https://myco.auth0.com/"
  jwt_validation_pubkeys = [trimspace(<<EOT
-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEZkDaJIg5h5GQLguNgGU/WM5dRaYp
7gF0zZRKUL95Dup93P49jzBdvn95wbfz5He3f+QbDAgQcqgJogjGad3akQ==
-----END PUBLIC KEY-----
EOT
  )]
  tune {
    listing_visibility = "unauth"
  }
}
