# vault_kv_secret_backend_v2, from the provider's documentation (the mount's name must not end in
# one of the letters of "/config": on import the provider trims them as a set, strings.TrimRight).
# import: vault_kv_secret_backend_v2.example kvv2-settings/config
resource "vault_mount" "kvv2" {
  path        = "kvv2-settings"
  type        = "kv"
  options     = { version = "2" }
  description = "KV Version 2 secret engine mount"
}

resource "vault_kv_secret_backend_v2" "example" {
  mount                = vault_mount.kvv2.path
  max_versions         = 5
  delete_version_after = 12600
  cas_required         = true
}
