# consul_admin_partition, from the provider's documentation.
# known-failure: admin partitions (/v1/partition) are issue 43's
# import: consul_admin_partition.na_west na-west
resource "consul_admin_partition" "na_west" {
  name        = "na-west"
  description = "Partition for North America West"
}
