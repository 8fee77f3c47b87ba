// Module consulgo drives a running Hangar's catalog API through github.com/hashicorp/consul/api only.
// Each area has its own package directory, which a jest runner under test/compat/ starts with
// CONSUL_HTTP_ADDR and CONSUL_HTTP_TOKEN set for a freshly started server.
package consulgo

import _ "github.com/hashicorp/consul/api"
