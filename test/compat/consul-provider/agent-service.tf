# consul_agent_service (deprecated by the provider for consul_service), from the provider's
# documentation: a service registered through the agent API, on the server's own node.
resource "consul_agent_service" "app" {
  address = "www.google.com"
  name    = "google"
  port    = 80
  tags    = ["tag0", "tag1"]
}
