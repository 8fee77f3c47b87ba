/**
 * Where scripts/bundle.mjs puts the packed CLI: the bundle's last line, `/*` + base64 + `*\/`.
 * Searched from its line start, not for the last `/*`: base64 ends with `/` one build in 64, and
 * that `/` and the closing `*\/` make a later `/*`.
 */
export function packedRange(bundle: string): { readonly start: number; readonly end: number } {
  return { start: bundle.lastIndexOf('\n/*') + 3, end: bundle.lastIndexOf('*/') };
}
