# vault_ssh_secret_backend_ca, from the provider's documentation (the mount at its own path: the dev
# server mounts `ssh`), with generate_signing_key = true as the provider's own tests have: without
# it the provider sends `generate_signing_key: false` and no key, which the public service refuses
# too ("missing public_key").
# (no import check: the provider reads back neither generate_signing_key nor key_type, both
# forcing a replacement; its own import test does not verify the state either)
resource "vault_mount" "example" {
  type = "ssh"
  path = "ssh-ca"
}

resource "vault_ssh_secret_backend_ca" "foo" {
  backend              = vault_mount.example.path
  generate_signing_key = true
}
