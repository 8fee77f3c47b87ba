# vault_generic_endpoint, from the provider's documentation, writing a role of the JWT method
# (Hangar has no userpass method) with ignore_absent_fields as the example does.
# (no import check: an imported vault_generic_endpoint has ignore_absent_fields unset, a plan diff on the public service too)
resource "vault_auth_backend" "jwt" {
  type = "jwt"
  path = "generic-jwt"
}

resource "vault_generic_endpoint" "u1" {
  depends_on           = [vault_auth_backend.jwt]
  path                 = "auth/generic-jwt/role/u1"
  ignore_absent_fields = true

  data_json = <<EOT
{
  "role_type": "jwt",
  "user_claim": "sub",
  "bound_audiences": ["https://myco.test"],
  "token_policies": ["p1"]
}
EOT
}
