// Module vaultgo drives a running Hangar's secrets API through github.com/hashicorp/vault/api only.
// Each area has its own package directory (core/, pki/, database/, ...), which a jest runner under
// test/compat/ starts with VAULT_ADDR and VAULT_TOKEN set for a freshly started server.
package vaultgo

import _ "github.com/hashicorp/vault/api"
