/**
 * A `catalog.service` object's key, `<namespace>/<node>/<service ID>` with each part URI-encoded
 * (node names and service IDs may hold '/'). Imported by the constructs: no dependencies.
 */
export function serviceKey(ns: string, node: string, serviceId: string): string {
  return [ns, node, serviceId].map(encodeURIComponent).join('/');
}
