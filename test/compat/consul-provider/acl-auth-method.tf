# consul_acl_auth_method (resource and data source) and consul_acl_binding_rule, from the
# provider's documentation (the kubernetes example with a real CA certificate: the public service
# refuses the example's "..." too; the "jwt" example as a jwt method with a validation key: its
# type "oidc" is an Enterprise method, which the community edition refuses as Hangar does). The
# provider cannot import these.
resource "consul_acl_auth_method" "minikube" {
  name        = "minikube"
  type        = "kubernetes"
  description = "dev minikube cluster"

  config_json = jsonencode({
    Host              = "https://192.0.2.42:8443"
    CACert            = <<-PEM
      -----BEGIN CERTIFICATE-----
      MIIBhDCCASmgAwIBAgIUTXahVCCO96EyA8jUmoFlMRm42pEwCgYIKoZIzj0EAwIw
      FjEUMBIGA1UEAwwLbWluaWt1YmUtY2EwIBcNMjYxMTI4MTY0MzU1WhgPMjEyNjEx
      MDQxNjQzNTVaMBYxFDASBgNVBAMMC21pbmlrdWJlLWNhMFkwEwYHKoZIzj0CAQYI
      KoZIzj0DAQcDQgAEqm1inFddLwGoc6Ugvr4WN61UkOoZjVFMmx1JzEvMYF5Br4Ga
      dulJLssQ/5gKFso41840b/tsu8T6gESZFNn2rKNTMFEwHQYDVR0OBBYEFKaU61mg
      3oWxm5SY2iet1gZDinSjMB8GA1UdIwQYMBaAFKaU61mg3oWxm5SY2iet1gZDinSj
      MA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSQAwRgIhANdK5e5b2FxmvYBg
      Q0rMVlVekEYlQvv6/16M5c9FIkAMAiEAj799jRiFc4u3EF5umNPNzkCqxN7E8NfI
      y59pRXfHeEY=
      -----END CERTIFICATE-----
      PEM
    ServiceAccountJWT = "eyJhbGciOiJSUzI1NiIsImtpZCI6IiJ9.e30.c2lnbmF0dXJl"
  })
}

resource "consul_acl_auth_method" "jwt" {
  name          = "auth0"
  type          = "jwt"
  max_token_ttl = "5m"

  config_json = jsonencode({
    BoundAudiences = [
      "V1RPi2MYptMV1RPi2MYptMV1RPi2MYpt"
    ]
    ClaimMappings = {
      "http://example.com/first_name" = "first_name"
      "http://example.com/last_name"  = "last_name"
    }
    ListClaimMappings = {
      "http://consul.com/groups" = "groups"
    }
    JWTValidationPubKeys = [<<-PEM
      -----BEGIN PUBLIC KEY-----
      MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEXC7ptnMlisQf9HYppA8CUDA+LOxo
      I+lu+XZaL84qMW66U/VS8NOpbTEhQxrwqvvHjRHFZrbqdj93uCC2TEGc7A==
      -----END PUBLIC KEY-----
      PEM
    ]
  })
}

resource "consul_acl_binding_rule" "test" {
  auth_method = consul_acl_auth_method.minikube.name
  description = "foobar"
  selector    = "serviceaccount.namespace==default"
  bind_type   = "service"
  bind_name   = "minikube"
}

data "consul_acl_auth_method" "minikube" {
  name = consul_acl_auth_method.minikube.name
}

output "auth_method_type" {
  value = data.consul_acl_auth_method.minikube.type
}
