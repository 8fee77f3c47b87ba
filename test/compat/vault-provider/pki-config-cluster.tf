# vault_pki_secret_backend_config_cluster, from the provider's documentation.
# import: vault_pki_secret_backend_config_cluster.example pki-cluster/config/cluster
resource "vault_mount" "root" {
  path                      = "pki-cluster"
  type                      = "pki"
  description               = "root PKI"
  default_lease_ttl_seconds = 8640000
  max_lease_ttl_seconds     = 8640000
}

resource "vault_pki_secret_backend_config_cluster" "example" {
  backend  = vault_mount.root.path
  path     = "http://127.0.0.1:8200/v1/pki-cluster"
  aia_path = "http://127.0.0.1:8200/v1/pki-cluster"
}
