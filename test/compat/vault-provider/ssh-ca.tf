# vault_ssh_secret_backend_ca, from the provider's documentation (the mount at its own path: the dev
# server mounts `ssh`).
# import: vault_ssh_secret_backend_ca.foo ssh-ca
resource "vault_mount" "example" {
  type = "ssh"
  path = "ssh-ca"
}

resource "vault_ssh_secret_backend_ca" "foo" {
  backend = vault_mount.example.path
}
