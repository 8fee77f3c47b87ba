# consul_key_prefix (resource and data source), from the provider's documentation (the AWS
# references become values). After an import the provider reads every key into `subkeys`: it cannot
# tell a `subkey` block from the map (against the public service too).
# import: consul_key_prefix.myapp_config myapp/config/
# import-ignore: subkeys, subkey
resource "consul_key_prefix" "myapp_config" {
  path_prefix = "myapp/config/"

  subkeys = {
    "elb_cname"         = "app-elb-123.us-east-1.elb.amazonaws.com"
    "s3_bucket_name"    = "myapp-bucket"
    "database/hostname" = "db.internal"
    "database/port"     = "5432"
    "database/username" = "myapp"
    "database/name"     = "myapp"
  }

  subkey {
    path  = "database/password"
    value = "not-a-real-password"
    flags = 2
  }
}

data "consul_key_prefix" "app" {
  path_prefix = consul_key_prefix.myapp_config.path_prefix

  subkey {
    name    = "hostname"
    path    = "database/hostname"
    default = "localhost"
  }
}

output "hostname" {
  value = data.consul_key_prefix.app.var.hostname
}
