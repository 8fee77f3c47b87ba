# The vault_auth_backends data source, from the provider's documentation (its filter on a type
# Hangar has: jwt, which the dev server mounts).
data "vault_auth_backends" "example" {}

data "vault_auth_backends" "example-filter" {
  type = "jwt"
}
