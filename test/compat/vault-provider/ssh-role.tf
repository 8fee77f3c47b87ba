# vault_ssh_secret_backend_role, from the provider's documentation (its CA and OTP roles).
# import: vault_ssh_secret_backend_role.foo ssh-roles/roles/my-role
# import: vault_ssh_secret_backend_role.bar ssh-roles/roles/otp-role
resource "vault_mount" "example" {
  type = "ssh"
  path = "ssh-roles"
}

resource "vault_ssh_secret_backend_role" "foo" {
  name                    = "my-role"
  backend                 = vault_mount.example.path
  key_type                = "ca"
  allow_user_certificates = true
}

resource "vault_ssh_secret_backend_role" "bar" {
  name          = "otp-role"
  backend       = vault_mount.example.path
  key_type      = "otp"
  default_user  = "default"
  allowed_users = "default,baz"
  cidr_list     = "0.0.0.0/0"
}
