# The vault_kv_secrets_list data source (KV version 1), from the provider's documentation.
resource "vault_mount" "kvv1" {
  path        = "kvv1-list"
  type        = "kv"
  options     = { version = "1" }
  description = "KV Version 1 secret engine mount"
}

resource "vault_kv_secret" "aws_secret" {
  path = "${vault_mount.kvv1.path}/aws-secret"
  data_json = jsonencode(
    {
      zip = "zap"
    }
  )
}

resource "vault_kv_secret" "azure_secret" {
  path = "${vault_mount.kvv1.path}/azure-secret"
  data_json = jsonencode(
    {
      foo = "bar"
    }
  )
}

data "vault_kv_secrets_list" "secrets" {
  path       = vault_mount.kvv1.path
  depends_on = [vault_kv_secret.aws_secret, vault_kv_secret.azure_secret]
}
