# vault_transform_template, from the provider's documentation.
# import: vault_transform_template.test
resource "vault_mount" "transform" {
  path = "transform-template"
  type = "transform"
}

resource "vault_transform_alphabet" "numerics" {
  path     = vault_mount.transform.path
  name     = "numerics"
  alphabet = "0123456789"
}

resource "vault_transform_template" "test" {
  path          = vault_transform_alphabet.numerics.path
  name          = "ccn"
  type          = "regex"
  pattern       = "(\\d{4})[- ](\\d{4})[- ](\\d{4})[- ](\\d{4})"
  alphabet      = "numerics"
  encode_format = "$1-$2-$3-$4"
  decode_formats = {
    "last-four-digits" = "$4"
  }
}
