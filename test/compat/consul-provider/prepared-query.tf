# consul_prepared_query, from the provider's documentation (this datacenter; no failover to others,
# which Hangar does not have).
# known-failure: prepared queries (/v1/query) are issue 43's
# import: consul_prepared_query.myapp-query
resource "consul_prepared_query" "myapp-query" {
  name         = "myquery"
  only_passing = true
  near         = "_agent"

  service = "myapp"
  tags    = ["active", "!standby"]

  dns {
    ttl = "30s"
  }
}
