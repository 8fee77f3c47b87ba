# consul_service on a node it creates and with an HTTP and a TCP check, from the provider's
# documentation ("Creating a new node with the service", "Register a health-check"; the TCP check as
# the provider's acceptance test writes it). The provider cannot import consul_service.
resource "consul_node" "compute" {
  name    = "compute-google"
  address = "www.google.com"
}

resource "consul_service" "google" {
  name = "google"
  node = consul_node.compute.name
  port = 80
  tags = ["tag0"]
}

resource "consul_node" "redis" {
  name    = "redis"
  address = "192.0.2.10"
}

resource "consul_service" "redis" {
  name = "redis"
  node = consul_node.redis.name
  port = 6379

  check {
    check_id                          = "service:redis1"
    name                              = "Redis health check"
    status                            = "passing"
    http                              = "https://www.hashicorptest.com"
    tls_skip_verify                   = false
    method                            = "PUT"
    interval                          = "5s"
    timeout                           = "1s"
    deregister_critical_service_after = "30s"

    header {
      name  = "foo"
      value = ["test"]
    }

    header {
      name  = "bar"
      value = ["test"]
    }
  }

  check {
    check_id = "service:redis-tcp"
    name     = "Redis TCP check"
    notes    = "the port answers"
    tcp      = "192.0.2.10:6379"
    interval = "10s"
    timeout  = "2s"
  }
}
