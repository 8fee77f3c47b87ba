# consul_node, from the provider's documentation.
# import: consul_node.foobar foobar
resource "consul_node" "foobar" {
  address = "192.168.10.10"
  name    = "foobar"
}
