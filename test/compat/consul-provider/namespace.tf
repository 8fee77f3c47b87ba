# consul_namespace, from the provider's documentation.
# import: consul_namespace.production production
resource "consul_namespace" "production" {
  name        = "production"
  description = "Production namespace"

  meta = {
    foo = "bar"
  }
}
