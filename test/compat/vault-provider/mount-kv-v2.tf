# vault_mount and vault_kv_secret_v2 (resource and data source), from the provider's documentation.
# import: vault_mount.kvv2 kvv2
# import: vault_kv_secret_v2.example kvv2/data/secret
# import-ignore: cas, data_json, delete_all_versions, disable_read
resource "vault_mount" "kvv2" {
  path        = "kvv2"
  type        = "kv"
  options     = { version = "2" }
  description = "KV Version 2 secret engine mount"
}

resource "vault_kv_secret_v2" "example" {
  mount               = vault_mount.kvv2.path
  name                = "secret"
  cas                 = 1
  delete_all_versions = true
  data_json = jsonencode({
    zip = "zap",
    foo = "bar"
  })
  custom_metadata {
    max_versions = 5
    data = {
      foo = "vault@example.com",
      bar = "12345"
    }
  }
}

data "vault_kv_secret_v2" "example" {
  mount = vault_mount.kvv2.path
  name  = vault_kv_secret_v2.example.name
}
