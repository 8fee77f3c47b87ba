# vault_token, from the provider's documentation; the role "app" it names is created here. No import
# check: the provider reads back neither role_name nor ttl, which force a replacement after an import
# on the public service too.
# import-ignore: ttl
resource "vault_token_auth_backend_role" "app" {
  role_name        = "app"
  allowed_policies = ["policy1", "policy2"]
}

resource "vault_token" "example" {
  role_name = vault_token_auth_backend_role.app.role_name

  policies = ["policy1", "policy2"]

  renewable = true
  ttl       = "24h"

  renew_min_lease = 43200
  renew_increment = 86400

  metadata = {
    "purpose" = "service-account"
  }
}
