# consul_certificate_authority with the built-in CA, from the provider's documentation.
# known-failure: the CA configuration (/v1/connect/ca/configuration) is issue 43's
resource "consul_certificate_authority" "connect" {
  connect_provider = "consul"

  config_json = jsonencode({
    LeafCertTTL         = "24h"
    RotationPeriod      = "2160h"
    IntermediateCertTTL = "8760h"
  })
}
