# vault_transform_transformation, from the provider's documentation (its tokenization example).
# import: vault_transform_transformation.tokenization
resource "vault_mount" "transform" {
  path = "transform-tokenization"
  type = "transform"
}

resource "vault_transform_transformation" "tokenization" {
  path          = vault_mount.transform.path
  name          = "ssn-tokenization"
  type          = "tokenization"
  mapping_mode  = "default"
  stores        = ["my-store"]
  allowed_roles = ["payments"]
  convergent    = true
}
