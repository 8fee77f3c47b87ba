import { isIP } from 'node:net';
import type { ApiName } from '../../engine/http/api';
import { parseHostPort } from '../../engine/http/server';
import { CLIENT_AUTH_MODES, ClientAuth, MIN_VERSIONS, MinVersion, TlsFile, TlsFiles } from '../../engine/http/tls';
import type { OptionSpec, ParsedOptions } from '../options';
import { UsageError } from '../usage';

/**
 * `hangar server`'s TLS flags: five per listener (`--secrets-tls-cert-file`, ...) and the same five
 * without a listener's name as defaults for all three (`--tls-cert-file`, ...), plus `--tls-disable`
 * (`--L-tls-disable`), which a listener on a non-loopback address needs to serve plain HTTP. The names
 * are the public services' listener keys (`tls_cert_file`, `tls_disable`, ...) as flags.
 */

const LISTENERS: readonly ApiName[] = ['registry', 'secrets', 'catalog'];

const FIELDS = {
  'tls-cert-file': { type: 'string', placeholder: 'FILE', help: 'TLS certificate (PEM: the leaf first, then its chain)' },
  'tls-key-file': { type: 'string', placeholder: 'FILE', help: 'TLS private key (PEM, unencrypted) of that certificate' },
  'tls-min-version': { type: 'string', placeholder: 'tls12|tls13', help: 'Oldest TLS version accepted (default tls12)' },
  'tls-client-ca-file': { type: 'string', placeholder: 'FILE', help: 'CA bundle (PEM) that client certificates must chain to' },
  'tls-client-auth': {
    type: 'string',
    placeholder: 'none|verify-if-given|require',
    help: 'Client certificates: not asked, checked when sent, or required (default: verify-if-given with a client CA, else none)',
  },
  'tls-disable': { type: 'boolean', help: 'Serve plain HTTP on a non-loopback address (refused without this flag)' },
} as const satisfies Record<string, OptionSpec>;
type Field = keyof typeof FIELDS;

const envOf = (flag: string) => `HANGAR_${flag.toUpperCase().replace(/-/g, '_')}`;

/** The flags above, for serverCommand's options: the defaults first, then each listener's. */
export const TLS_OPTIONS: Record<string, OptionSpec> = Object.fromEntries([
  ...Object.entries(FIELDS).map(([flag, spec]) => [flag, { ...spec, env: envOf(flag), once: true, help: `${spec.help}; default of the three listeners` }]),
  ...LISTENERS.flatMap((listener) =>
    Object.keys(FIELDS).map((field) => {
      const flag = `${listener}-${field}`;
      return [flag, { ...FIELDS[field as Field], env: envOf(flag), once: true, help: `The ${listener} listener's --${field}` }];
    }),
  ),
  ['dev-tls', { type: 'boolean', env: 'HANGAR_DEV_TLS', commandLineOnly: true, help: 'Dev mode on TLS: a CA made by the PKI engine, its certificate in <data>/ca.pem (implies --dev)' }],
]);

/** A listener's value of a field: its own flag, else the default flag; with the flag that gave it. */
function valueOf(options: ParsedOptions, listener: ApiName, field: Field): { value: string | boolean; flag: string } | undefined {
  for (const flag of [`${listener}-${field}`, field]) {
    const value = options[flag];
    if (value !== undefined && value !== false) return { value, flag: `--${flag}` };
  }
  return undefined;
}

const file = (v: { value: string | boolean; flag: string }): TlsFile => ({ path: v.value as string, flag: v.flag });

/** A host the machine alone reaches: plain HTTP is allowed there without --tls-disable. */
export function isLoopback(host: string): boolean {
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1' || /^::ffff:127\./i.test(host);
}

/**
 * Each listener's TLS files from the flags (checked for consistency here; the files themselves are
 * read by loadTls), or, with `devTls`, the dev server's own files for all three.
 * Refuses a listener on a non-loopback address without TLS unless its --tls-disable says so.
 */
export function tlsFilesOf(
  options: ParsedOptions,
  addresses: Readonly<Record<ApiName, string>>,
  devTls?: { cert: string; key: string },
): Partial<Record<ApiName, TlsFiles>> {
  const given = Object.keys(TLS_OPTIONS).filter((flag) => flag !== 'dev-tls' && options[flag] !== undefined && options[flag] !== false);
  if (devTls) {
    if (given.length > 0) throw new UsageError(`--dev-tls makes its own certificate: do not also give --${given[0]}`);
    const cert = { path: devTls.cert, flag: '--dev-tls' };
    const key = { path: devTls.key, flag: '--dev-tls' };
    return Object.fromEntries(LISTENERS.map((l) => [l, { cert, key, minVersion: 'tls12', clientAuth: 'none' } satisfies TlsFiles]));
  }
  if (options['tls-disable'] === true && options['tls-cert-file'] !== undefined) throw new UsageError('--tls-disable and --tls-cert-file conflict: give one of them');
  const result: Partial<Record<ApiName, TlsFiles>> = {};
  for (const listener of LISTENERS) {
    const cert = valueOf(options, listener, 'tls-cert-file');
    const key = valueOf(options, listener, 'tls-key-file');
    const own = (field: Field) => options[`${listener}-${field}`] !== undefined;
    if (!cert) {
      // Listener-specific settings with nothing to apply to are mistakes; defaults may serve other listeners.
      const stray = (['tls-key-file', 'tls-min-version', 'tls-client-ca-file', 'tls-client-auth'] as const).find(own);
      if (stray) throw new UsageError(`--${listener}-${stray} needs a certificate: give --${listener}-tls-cert-file (or --tls-cert-file)`);
      const { host } = parseHostPort(addresses[listener]);
      if (!isLoopback(host) && valueOf(options, listener, 'tls-disable') === undefined) {
        throw new UsageError(
          `--${listener}-addr ${addresses[listener]} is not a loopback address and the ${listener} listener has no TLS: ` +
            `give --${listener}-tls-cert-file and --${listener}-tls-key-file (or --tls-cert-file and --tls-key-file), ` +
            `or --${listener}-tls-disable (or --tls-disable) to serve plain HTTP on the network`,
        );
      }
      continue;
    }
    if (options[`${listener}-tls-disable`] === true) throw new UsageError(`--${listener}-tls-disable and ${cert.flag} conflict: give one of them`);
    if (!key) throw new UsageError(`${cert.flag} needs a key: give --${listener}-tls-key-file (or --tls-key-file)`);
    const minVersion = (valueOf(options, listener, 'tls-min-version')?.value ?? 'tls12') as string;
    if (!(minVersion in MIN_VERSIONS)) {
      throw new UsageError(`${valueOf(options, listener, 'tls-min-version')!.flag} must be ${Object.keys(MIN_VERSIONS).join(' or ')}, not "${minVersion}"`);
    }
    const clientCa = valueOf(options, listener, 'tls-client-ca-file');
    const auth = valueOf(options, listener, 'tls-client-auth');
    // A client CA alone asks for certificates and checks those sent (as the secrets service's
    // listener does for certificate login); `require` must be said.
    const clientAuth = (auth?.value ?? (clientCa ? 'verify-if-given' : 'none')) as ClientAuth;
    if (!CLIENT_AUTH_MODES.includes(clientAuth)) throw new UsageError(`${auth!.flag} must be ${CLIENT_AUTH_MODES.join(', ')}, not "${clientAuth}"`);
    if (clientAuth !== 'none' && !clientCa) {
      throw new UsageError(`${auth!.flag} ${clientAuth} needs a CA to check client certificates against: give --${listener}-tls-client-ca-file (or --tls-client-ca-file)`);
    }
    result[listener] = {
      cert: file(cert),
      key: file(key),
      minVersion: minVersion as MinVersion,
      clientAuth,
      ...(clientCa && clientAuth !== 'none' ? { clientCa: file(clientCa) } : {}),
    };
  }
  if (Object.keys(result).length === 0) {
    const stray = given.find((flag) => flag !== 'tls-disable' && !flag.endsWith('-tls-disable'));
    if (stray) throw new UsageError(`--${stray} needs a certificate: give --tls-cert-file (or a listener's --LISTENER-tls-cert-file)`);
  }
  return result;
}
