# consul_acl_role (resource and data source) and consul_acl_role_policy_attachment, from the
# provider's documentation (the attachment on the role the case creates, read back through the
# data source).
# import: consul_acl_role.read
resource "consul_acl_policy" "read-policy" {
  name        = "read-policy"
  rules       = "node \"\" { policy = \"read\" }"
  datacenters = ["dc1"]
}

resource "consul_acl_policy" "write-policy" {
  name  = "write-policy"
  rules = "key_prefix \"app/\" { policy = \"write\" }"
}

resource "consul_acl_role" "read" {
  name        = "foo"
  description = "bar"

  policies = [
    consul_acl_policy.read-policy.id
  ]

  service_identities {
    service_name = "foo"
  }

  lifecycle {
    ignore_changes = [policies]
  }
}

data "consul_acl_role" "my_role" {
  name = consul_acl_role.read.name
}

resource "consul_acl_role_policy_attachment" "my_role_write_policy" {
  role_id = data.consul_acl_role.my_role.id
  policy  = consul_acl_policy.write-policy.name
}
