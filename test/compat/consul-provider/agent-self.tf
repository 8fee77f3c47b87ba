# The consul_agent_self and consul_agent_config data sources, from the provider's documentation.
data "consul_agent_self" "read-dc1-agent" {}

data "consul_agent_config" "remote_agent" {}

output "consul_version" {
  value = data.consul_agent_config.remote_agent.version
}

output "datacenter" {
  value = data.consul_agent_self.read-dc1-agent.datacenter
}
