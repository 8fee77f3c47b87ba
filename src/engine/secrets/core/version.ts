/**
 * The public service's version whose API Hangar's secrets service implements: what `sys/health`,
 * `sys/seal-status` and `sys/version-history` report as `version`, so that version-gated tools
 * (the Terraform provider, the CLI) enable what Hangar supports. Hangar's own version is reported
 * beside it as `hangar_version` (docs/compatibility.md, "Version").
 */
export const SECRETS_API_VERSION = '1.21.1';
