import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

function openssl(dir: string, ...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

/** A private CA (ca.pem) made with openssl in `dir` and, when `server`, a certificate for 127.0.0.1 that it signed (server.pem, server.key). */
export function makeCa(dir: string, server: boolean): { ca: string; cert?: string; key?: string } {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  openssl(dir, 'req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=Hangar test CA');
  const ca = readFileSync(join(dir, 'ca.pem'), 'utf8');
  if (!server) return { ca };
  openssl(dir, 'req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1');
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1\n');
  openssl(dir, 'x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '1', '-extfile', 'san.ext');
  return { ca, cert: readFileSync(join(dir, 'server.pem'), 'utf8'), key: readFileSync(join(dir, 'server.key'), 'utf8') };
}

export interface IssuedFiles {
  /** The certificate (PEM), followed by its CA's when `chain` was asked for. */
  readonly cert: string;
  readonly key: string;
}

/** openssl's dates: YYYYMMDDHHMMSSZ. */
const asn1Time = (date: Date) => `${date.toISOString().replace(/[-:T]/g, '').slice(0, 14)}Z`;

/**
 * A private CA made with openssl (`openssl ca`, which takes explicit validity dates) that issues
 * server and client certificates as files in its directory: the TLS tests' certificates.
 */
export class TestCa {
  readonly ca: string;

  constructor(
    readonly dir: string,
    name = 'Hangar test CA',
  ) {
    openssl(dir, 'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', `/CN=${name}`);
    writeFileSync(join(dir, 'index.txt'), '');
    writeFileSync(join(dir, 'serial'), '1000\n');
    writeFileSync(
      join(dir, 'ca.cnf'),
      [
        '[ca]', 'default_ca = test', '[test]', `dir = ${dir}`, 'database = $dir/index.txt', 'new_certs_dir = $dir',
        'certificate = $dir/ca.pem', 'private_key = $dir/ca.key', 'serial = $dir/serial', 'default_md = sha256', 'policy = any', 'unique_subject = no',
        'copy_extensions = none', '[any]', 'commonName = supplied', '',
      ].join('\n'),
    );
    this.ca = join(dir, 'ca.pem');
  }

  /**
   * Issues a certificate for `name` (a server's for 127.0.0.1 and localhost, or a client's), valid
   * from `from` to `to` (default: an hour ago to a day ahead); returns the paths of its files.
   */
  issue(name: string, options: { client?: boolean; from?: Date; to?: Date; chain?: boolean } = {}): IssuedFiles {
    const base = join(this.dir, name);
    const ext = `${base}.ext`;
    writeFileSync(
      ext,
      options.client
        ? 'extendedKeyUsage=clientAuth\n'
        : 'subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost\nextendedKeyUsage=serverAuth\n',
    );
    openssl(this.dir, 'req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${base}.key`, '-out', `${base}.csr`, '-subj', `/CN=${name}`);
    const from = options.from ?? new Date(Date.now() - 3_600_000);
    const to = options.to ?? new Date(Date.now() + 86_400_000);
    openssl(
      this.dir, 'ca', '-batch', '-notext', '-config', 'ca.cnf', '-in', `${base}.csr`, '-out', `${base}.pem`,
      '-startdate', asn1Time(from), '-enddate', asn1Time(to), '-extfile', ext,
    );
    if (options.chain) writeFileSync(`${base}.pem`, readFileSync(`${base}.pem`, 'utf8') + readFileSync(this.ca, 'utf8'));
    return { cert: `${base}.pem`, key: `${base}.key` };
  }
}
