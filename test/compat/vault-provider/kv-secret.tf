# vault_kv_secret (KV version 1; resource and data source), from the provider's documentation.
# import: vault_kv_secret.secret kvv1/secret
resource "vault_mount" "kvv1" {
  path        = "kvv1"
  type        = "kv"
  options     = { version = "1" }
  description = "KV Version 1 secret engine mount"
}

resource "vault_kv_secret" "secret" {
  path = "${vault_mount.kvv1.path}/secret"
  data_json = jsonencode(
    {
      zip = "zap",
      foo = "bar"
    }
  )
}

data "vault_kv_secret" "secret_data" {
  path = vault_kv_secret.secret.path
}
