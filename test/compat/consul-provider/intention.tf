# consul_intention, from the provider's documentation (static service names).
# known-failure: intentions (/v1/connect/intentions) are issue 43's
# import: consul_intention.database
resource "consul_intention" "database" {
  source_name      = "api"
  destination_name = "db"
  action           = "allow"
}
