# vault_mount, from the provider's documentation (its four examples; paths made unique). The kv-v2
# mount is not imported: the public service too reads its type back as "kv", which forces a
# replacement of type "kv-v2".
# import: vault_mount.example mount-dummy
# import: vault_mount.transit-example
# import: vault_mount.pki-example
resource "vault_mount" "example" {
  path        = "mount-dummy"
  type        = "generic"
  description = "This is an example mount"
}

resource "vault_mount" "kvv2-example" {
  path = "mount-version2-example"
  type = "kv-v2"
  options = {
    version = "2"
    type    = "kv-v2"
  }
  description = "This is an example KV Version 2 secret engine mount"
}

resource "vault_mount" "transit-example" {
  path        = "mount-transit-example"
  type        = "transit"
  description = "This is an example transit secret engine mount"

  options = {
    convergent_encryption = false
  }
}

resource "vault_mount" "pki-example" {
  path        = "mount-pki-example"
  type        = "pki"
  description = "This is an example PKI mount"

  default_lease_ttl_seconds = 3600
  max_lease_ttl_seconds     = 86400
}
