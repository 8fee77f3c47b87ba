/** The reference that names a mount's default issuer (or key): `issuer_ref` defaults to it. */
export const DEFAULT_REF = 'default';
