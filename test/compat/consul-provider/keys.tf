# consul_keys (resource and data source), from the provider's documentation (the load balancer's
# name a value; the datacenter and token the provider's own).
resource "consul_keys" "app" {
  key {
    path  = "service/app/elb_address"
    value = "app-elb-123.us-east-1.elb.amazonaws.com"
  }

  key {
    path   = "service/app/retired"
    value  = "yes"
    delete = true
  }
}

data "consul_keys" "app" {
  key {
    name    = "ami"
    path    = one([for k in consul_keys.app.key : k.path if !k.delete])
    default = "ami-1234"
  }
}

output "ami" {
  value = data.consul_keys.app.var.ami
}
