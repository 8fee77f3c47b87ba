import { ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { tempDir } from './storage';
import { freePort } from '../setup/postgres';

const run = promisify(execFile);
const SLAPD = '/usr/sbin/slapd';

/**
 * A private OpenLDAP for tests: Debian's slapd on a temporary directory, on loopback ports
 * (ldap:// with StartTLS, and ldaps://), with a test CA, the ppolicy overlay (it keeps
 * `pwdChangedTime`) and a tiny schema that carries the Active Directory attributes the directory
 * engines read and write (`unicodePwd`, `pwdLastSet`, `userPrincipalName`, `sAMAccountName`) and
 * RACF's (`racfid`, `racfPassword`, `racfPassPhrase`, `racfAttributes`) as auxiliary classes, so
 * that one slapd serves every dialect.
 */
export interface Slapd {
  /** ldap://127.0.0.1:PORT (StartTLS available). */
  readonly url: string;
  /** ldaps://127.0.0.1:PORT. */
  readonly ldapsUrl: string;
  readonly suffix: string;
  /** The test CA (PEM) that signed the server's certificate for 127.0.0.1. */
  readonly caPem: string;
  /** The directory's own administrator (rootdn) and its password, for the tests' own changes. */
  readonly rootDn: string;
  readonly rootPw: string;
  /** An entry allowed to manage every entry (as is every entry under ou=system): what the engine binds as. */
  readonly managerDn: string;
  readonly managerPw: string;
  /** Adds entries (LDIF) as the rootdn. */
  add(ldif: string): Promise<void>;
  /** Modifies entries (LDIF) as the rootdn; `args` adds options (`['-e', 'relax']` for operational attributes). */
  modify(ldif: string, args?: string[]): Promise<void>;
  /** Whether `ldapwhoami` binds as dn with password. */
  canBind(dn: string, password: string): Promise<boolean>;
  /** One attribute of one entry as `ldapsearch` shows it (base64 values decoded), or undefined. */
  attribute(dn: string, name: string): Promise<string | undefined>;
  stop(): Promise<void>;
}

/** True when slapd is installed; under CI a missing slapd is a failure, never a skip. */
export function haveSlapd(): boolean {
  const found = existsSync(SLAPD) && existsSync('/usr/bin/ldapwhoami');
  if (!found && process.env.CI) throw new Error('slapd or ldap-utils is missing: run scripts/setup');
  return found;
}


/**
 * Attributes of Active Directory and of IBM RACF's LDAP interface, under a private test arc
 * (1.3.6.1.4.1.55555.14), for the AD and RACF dialects.
 */
const AD_SCHEMA = `
attributetype ( 1.3.6.1.4.1.55555.14.1.1 NAME 'unicodePwd' SYNTAX 1.3.6.1.4.1.1466.115.121.1.40 SINGLE-VALUE )
attributetype ( 1.3.6.1.4.1.55555.14.1.2 NAME 'pwdLastSet' EQUALITY integerMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.27 SINGLE-VALUE )
attributetype ( 1.3.6.1.4.1.55555.14.1.3 NAME 'userPrincipalName' EQUALITY caseIgnoreMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 SINGLE-VALUE )
attributetype ( 1.3.6.1.4.1.55555.14.1.4 NAME 'sAMAccountName' EQUALITY caseIgnoreMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 SINGLE-VALUE )
objectclass ( 1.3.6.1.4.1.55555.14.2.1 NAME 'hangarAdAccount' AUXILIARY MAY ( unicodePwd $ pwdLastSet $ userPrincipalName $ sAMAccountName ) )
attributetype ( 1.3.6.1.4.1.55555.14.1.5 NAME 'racfid' EQUALITY caseIgnoreMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 SINGLE-VALUE )
attributetype ( 1.3.6.1.4.1.55555.14.1.6 NAME 'racfPassword' SYNTAX 1.3.6.1.4.1.1466.115.121.1.40 SINGLE-VALUE )
attributetype ( 1.3.6.1.4.1.55555.14.1.7 NAME 'racfPassPhrase' SYNTAX 1.3.6.1.4.1.1466.115.121.1.40 SINGLE-VALUE )
attributetype ( 1.3.6.1.4.1.55555.14.1.8 NAME 'racfAttributes' EQUALITY caseIgnoreMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 )
objectclass ( 1.3.6.1.4.1.55555.14.2.2 NAME 'hangarRacfAccount' AUXILIARY MAY ( racfid $ racfPassword $ racfPassPhrase $ racfAttributes ) )
`;

async function makeCa(dir: string): Promise<void> {
  const o = (...a: string[]) => run('openssl', a, { cwd: dir });
  await o('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=Hangar test CA');
  await o('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1');
  writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  await o('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '2', '-extfile', 'ext.cnf');
}

export async function startSlapd(): Promise<Slapd> {
  const dir = tempDir('hangar-slapd-');
  const suffix = 'dc=example,dc=com';
  const rootDn = `cn=admin,${suffix}`;
  const rootPw = 'root-secret';
  const managerDn = `cn=hangar,ou=system,${suffix}`;
  const managerPw = 'manager-initial-password';
  mkdirSync(join(dir, 'db'));
  writeFileSync(join(dir, 'hangar-ad.schema'), AD_SCHEMA);
  await makeCa(dir);
  const schemas = ['core', 'cosine', 'inetorgperson', 'nis'].map((s) => `include /etc/ldap/schema/${s}.schema`).join('\n');
  writeFileSync(
    join(dir, 'slapd.conf'),
    `${schemas}
include ${dir}/hangar-ad.schema
modulepath /usr/lib/ldap
moduleload back_mdb
moduleload ppolicy
pidfile ${dir}/slapd.pid
TLSCACertificateFile ${dir}/ca.pem
TLSCertificateFile ${dir}/server.pem
TLSCertificateKeyFile ${dir}/server.key
database mdb
maxsize 67108864
# A test directory: no fsync per write (the benchmark then measures Hangar, not the disk).
dbnosync
suffix "${suffix}"
rootdn "${rootDn}"
rootpw ${rootPw}
directory ${dir}/db
overlay ppolicy
ppolicy_default "cn=default,ou=policies,${suffix}"
access to attrs=userPassword,unicodePwd by dn.children="ou=system,${suffix}" manage by self write by anonymous auth by * none
access to * by dn.children="ou=system,${suffix}" manage by * read
`,
  );
  writeFileSync(
    join(dir, 'base.ldif'),
    `dn: ${suffix}
objectClass: dcObject
objectClass: organization
dc: example
o: Example

dn: ou=system,${suffix}
objectClass: organizationalUnit
ou: system

dn: ou=people,${suffix}
objectClass: organizationalUnit
ou: people

dn: ou=policies,${suffix}
objectClass: organizationalUnit
ou: policies

dn: cn=default,ou=policies,${suffix}
objectClass: organizationalRole
objectClass: pwdPolicy
cn: default
pwdAttribute: userPassword

dn: ${managerDn}
objectClass: inetOrgPerson
cn: hangar
sn: hangar
uid: hangar
userPassword: ${managerPw}
`,
  );
  await run('/usr/sbin/slapadd', ['-f', join(dir, 'slapd.conf'), '-l', join(dir, 'base.ldif')]);
  const port = await freePort();
  const tlsPort = await freePort();
  const url = `ldap://127.0.0.1:${port}`;
  const ldapsUrl = `ldaps://127.0.0.1:${tlsPort}`;
  const child: ChildProcess = spawn(SLAPD, ['-f', join(dir, 'slapd.conf'), '-h', `${url}/ ${ldapsUrl}/`, '-d', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr?.on('data', (c: Buffer) => void (log += c.toString()));
  const env = { ...process.env, LDAPTLS_CACERT: join(dir, 'ca.pem') };
  const tool = (cmd: string, args: string[], input?: string) =>
    new Promise<{ code: number; out: string }>((resolve) => {
      const p = spawn(cmd, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
      let out = '';
      p.stdout.on('data', (c: Buffer) => void (out += c.toString()));
      p.stderr.on('data', (c: Buffer) => void (out += c.toString()));
      p.on('close', (code) => resolve({ code: code ?? -1, out }));
      // A tool that reads no input (ldapwhoami) may exit first: a broken pipe is not an error here.
      p.stdin.on('error', () => undefined);
      p.stdin.end(input ?? '');
    });
  for (let i = 0; ; i++) {
    if ((await tool('ldapwhoami', ['-x', '-H', url, '-D', rootDn, '-w', rootPw])).code === 0) break;
    if (i > 100 || child.exitCode !== null) {
      child.kill();
      throw new Error(`slapd did not start: ${log}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const asRoot = async (cmd: string, ldif: string, args: string[] = []) => {
    const res = await tool(cmd, ['-x', '-H', url, '-D', rootDn, '-w', rootPw, ...args], ldif);
    if (res.code !== 0) throw new Error(`${cmd}: ${res.out}`);
  };
  return {
    url,
    ldapsUrl,
    suffix,
    caPem: readFileSync(join(dir, 'ca.pem'), 'utf8'),
    rootDn,
    rootPw,
    managerDn,
    managerPw,
    add: (ldif) => asRoot('ldapadd', ldif),
    modify: (ldif, args) => asRoot('ldapmodify', ldif, args),
    canBind: async (dn, password) => (await tool('ldapwhoami', ['-x', '-H', url, '-D', dn, '-w', password])).code === 0,
    async attribute(dn, name) {
      const res = await tool('ldapsearch', ['-x', '-LLL', '-o', 'ldif-wrap=no', '-H', url, '-D', rootDn, '-w', rootPw, '-b', dn, '-s', 'base', '(objectClass=*)', name]);
      if (res.code !== 0) return undefined;
      const line = res.out.split('\n').find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`));
      if (!line) return undefined;
      const rest = line.slice(name.length + 1);
      return rest.startsWith(':') ? Buffer.from(rest.slice(1).trim(), 'base64').toString('latin1') : rest.trim();
    },
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** LDIF of an OpenLDAP service account `uid=<uid>,ou=people` with a password. */
export function openldapAccount(suffix: string, uid: string, password: string): string {
  return `dn: uid=${uid},ou=people,${suffix}\nobjectClass: inetOrgPerson\nuid: ${uid}\ncn: ${uid}\nsn: ${uid}\nuserPassword: ${password}\n\n`;
}

/** LDIF of an AD-like account: `userPrincipalName` and `sAMAccountName` on the auxiliary class. */
export function adAccount(suffix: string, sam: string, upnDomain: string): string {
  return `dn: cn=${sam},ou=people,${suffix}\nobjectClass: inetOrgPerson\nobjectClass: hangarAdAccount\ncn: ${sam}\nsn: ${sam}\nsAMAccountName: ${sam}\nuserPrincipalName: ${sam}@${upnDomain}\n\n`;
}

/** LDIF of a RACF-like account `racfid=<id>,ou=people`: the RACF attributes on the auxiliary class. */
export function racfAccount(suffix: string, id: string): string {
  return `dn: racfid=${id},ou=people,${suffix}\nobjectClass: inetOrgPerson\nobjectClass: hangarRacfAccount\nracfid: ${id}\ncn: ${id}\nsn: ${id}\n\n`;
}
