# vault_transform_transformation, from the provider's documentation (its FPE example, naming a
# template "ccn" it does not create, as the documentation does).
# import: vault_transform_transformation.example
# import-ignore: template
# (`template` is not read back: the public service returns `templates` only, as Hangar does.)
resource "vault_mount" "example" {
  path = "transform-fpe"
  type = "transform"
}

resource "vault_transform_transformation" "example" {
  path          = vault_mount.example.path
  name          = "ccn-fpe"
  type          = "fpe"
  template      = "ccn"
  tweak_source  = "internal"
  allowed_roles = ["payments"]
}
