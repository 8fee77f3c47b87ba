# consul_acl_token_policy_attachment and consul_acl_token_role_attachment on the anonymous token,
# from the provider's documentation (the role attachment names the role by `role`: the example's
# `role_id` is not the resource's argument).
# import: consul_acl_token_policy_attachment.attachment 00000000-0000-0000-0000-000000000002:agent-attached
resource "consul_acl_policy" "agent" {
  name  = "agent-attached"
  rules = <<-RULE
    node_prefix "" {
      policy = "read"
    }
    RULE
}

resource "consul_acl_token_policy_attachment" "attachment" {
  token_id = "00000000-0000-0000-0000-000000000002"
  policy   = consul_acl_policy.agent.name
}

resource "consul_acl_role" "role" {
  name        = "foo-attached"
  description = "Foo"

  service_identities {
    service_name = "foo"
  }
}

resource "consul_acl_token_role_attachment" "attachment" {
  token_id = "00000000-0000-0000-0000-000000000002"
  role     = consul_acl_role.role.name

  # Each attachment reads the token and writes it back with one more link: run side by side they
  # would overwrite each other (against the public service too).
  depends_on = [consul_acl_token_policy_attachment.attachment]
}
