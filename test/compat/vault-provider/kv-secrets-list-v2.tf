# The vault_kv_secrets_list_v2 and vault_kv_secret_subkeys_v2 data sources, from the provider's
# documentation (the nested list names the nested secret's parent: the example's `test_2` does not
# exist).
resource "vault_mount" "kvv2" {
  path        = "kvv2-list"
  type        = "kv"
  options     = { version = "2" }
  description = "KV Version 2 secret engine mount"
}

resource "vault_kv_secret_v2" "aws_secret" {
  mount = vault_mount.kvv2.path
  name  = "aws_secret"
  data_json = jsonencode(
    {
      zip = "zap",
      foo = "bar"
    }
  )
}

resource "vault_kv_secret_v2" "azure_secret" {
  mount = vault_mount.kvv2.path
  name  = "azure_secret"
  data_json = jsonencode(
    {
      foo = "bar"
    }
  )
}

resource "vault_kv_secret_v2" "nested_secret" {
  mount = vault_mount.kvv2.path
  name  = "${vault_kv_secret_v2.azure_secret.name}/dev"
  data_json = jsonencode(
    {
      password = "test"
    }
  )
}

data "vault_kv_secrets_list_v2" "secrets" {
  mount      = vault_mount.kvv2.path
  depends_on = [vault_kv_secret_v2.aws_secret, vault_kv_secret_v2.azure_secret]
}

data "vault_kv_secrets_list_v2" "nested_secrets" {
  mount      = vault_mount.kvv2.path
  name       = vault_kv_secret_v2.azure_secret.name
  depends_on = [vault_kv_secret_v2.nested_secret]
}

data "vault_kv_secret_subkeys_v2" "test" {
  mount = vault_mount.kvv2.path
  name  = vault_kv_secret_v2.aws_secret.name
}
