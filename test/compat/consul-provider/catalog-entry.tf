# consul_catalog_entry (deprecated by the provider for consul_node and consul_service), from the
# provider's documentation (`service` a block: the example's `service = {` is not accepted by
# Terraform 0.12 and later).
resource "consul_catalog_entry" "app" {
  address = "192.168.10.10"
  node    = "foobar-entry"

  service {
    address = "127.0.0.1"
    id      = "redis1"
    name    = "redis"
    port    = 8000
    tags    = ["master", "v1"]
  }
}
