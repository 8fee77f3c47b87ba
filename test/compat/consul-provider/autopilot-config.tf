# consul_autopilot_config, from the provider's documentation.
# known-failure: /v1/operator/autopilot/configuration is issue 43's (operator endpoints)
resource "consul_autopilot_config" "config" {
  cleanup_dead_servers   = false
  last_contact_threshold = "1s"
  max_trailing_logs      = 500
}
