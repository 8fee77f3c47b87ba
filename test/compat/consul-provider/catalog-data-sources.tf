# The catalog data sources, from the provider's documentation: consul_nodes, consul_services,
# consul_service (reading the server's own `consul` service) and their deprecated consul_catalog_*
# aliases, consul_service_health and consul_datacenters. The examples' `example_resource` becomes
# outputs, read once the case's service is registered (`depends_on`); consul_service_health reads a service this case registers
# (`name`: the example's `service` is not the data source's argument).
data "consul_nodes" "read-dc1-nodes" {
  query_options {
    datacenter = "dc1"
  }

  depends_on = [consul_service.vault]
}

data "consul_services" "read-dc1" {
  query_options {
    datacenter = "dc1"
  }

  depends_on = [consul_service.vault]
}

data "consul_service" "read-consul-dc1" {
  name       = "consul"
  datacenter = "dc1"
}

data "consul_catalog_nodes" "nodes" {
  depends_on = [consul_service.vault]
}

data "consul_catalog_services" "services" {
  depends_on = [consul_service.vault]
}

data "consul_catalog_service" "consul" {
  name = "consul"
}

data "consul_datacenters" "all" {}

resource "consul_node" "vault" {
  name    = "vault-node"
  address = "192.0.2.20"
}

resource "consul_service" "vault" {
  name = "vault"
  node = consul_node.vault.name
  port = 8200
  tags = ["active"]

  check {
    check_id = "service:vault"
    name     = "Vault health"
    status   = "passing"
    http     = "http://192.0.2.20:8200/v1/sys/health"
    interval = "10s"
    timeout  = "1s"
  }
}

data "consul_service_health" "vault" {
  name    = consul_service.vault.name
  passing = true
}

output "node_names" {
  value = join(" ", formatlist("%s", data.consul_nodes.read-dc1-nodes.node_names))
}

# Sorted: the provider lists the names in Go's map order, which changes from one read to the next
# (against the public service too).
output "services" {
  value = join(" ", sort(data.consul_services.read-dc1.names))
}

output "consul_nodes" {
  value = join(" ", data.consul_service.read-consul-dc1.service[*].node_name)
}

output "vault_address" {
  value = "https://${data.consul_service_health.vault.results.0.service.0.address}:${data.consul_service_health.vault.results.0.service.0.port}"
}

output "datacenters" {
  value = data.consul_datacenters.all.datacenters
}

output "aliases" {
  value = [length(data.consul_catalog_nodes.nodes.node_names), length(data.consul_catalog_services.services.names), length(data.consul_catalog_service.consul.service)]
}
