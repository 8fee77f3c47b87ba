# consul_acl_policy (resource and data source), from the provider's documentation.
# import: consul_acl_policy.test
resource "consul_acl_policy" "test" {
  name        = "my_policy"
  datacenters = ["dc1"]
  rules       = <<-RULE
    node_prefix "" {
      policy = "read"
    }
    RULE
}

data "consul_acl_policy" "test" {
  name = consul_acl_policy.test.name
}

output "rules" {
  value = data.consul_acl_policy.test.rules
}
