# vault_password_policy, from the provider's documentation.
# import: vault_password_policy.alphanumeric alphanumeric
resource "vault_password_policy" "alphanumeric" {
  name = "alphanumeric"

  policy = <<EOT
    length = 20
    rule "charset" {
      charset = "abcdefghijklmnopqrstuvwxyz0123456789"
    }
  EOT
}
