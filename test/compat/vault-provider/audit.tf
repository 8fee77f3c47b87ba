# vault_audit, from the provider's documentation (the file device; Hangar's only device type), to
# the file device's "discard" target instead of a Windows path.
# import: vault_audit.test file
resource "vault_audit" "test" {
  type = "file"

  options = {
    file_path = "discard"
  }
}
