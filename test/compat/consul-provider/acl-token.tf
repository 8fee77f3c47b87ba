# consul_acl_token (resource and data sources), from the provider's documentation (the
# predefined accessor ID a literal instead of a random_uuid).
# import: consul_acl_token.test
# import: consul_acl_token.test_predefined_id 9b20de68-3ea2-4b70-b4f1-506afad062a4
resource "consul_acl_policy" "agent" {
  name  = "agent-token-policy"
  rules = <<-RULE
    node_prefix "" {
      policy = "read"
    }
    RULE
}

resource "consul_acl_token" "test" {
  description = "my test token"
  policies    = [consul_acl_policy.agent.name]
  local       = true
}

resource "consul_acl_token" "test_predefined_id" {
  accessor_id = "9b20de68-3ea2-4b70-b4f1-506afad062a4"
  description = "my test uuid token"
  policies    = [consul_acl_policy.agent.name]
  local       = true
}

data "consul_acl_token" "test" {
  accessor_id = consul_acl_token.test.id
}

data "consul_acl_token_secret_id" "test" {
  accessor_id = consul_acl_token.test_predefined_id.id
}

output "description" {
  value = data.consul_acl_token.test.description
}

output "secret_length" {
  value     = length(data.consul_acl_token_secret_id.test.secret_id)
  sensitive = true
}
