/** Where the catalog's DNS interface listens by default (the public service's DNS port), in a module of its own: `hangar --help` shows it without loading the DNS code. */
export const DEFAULT_DNS_ADDRESS = '127.0.0.1:8600';
