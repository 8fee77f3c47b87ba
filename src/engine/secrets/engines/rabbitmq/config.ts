import { z } from 'zod';
import { ManagementClient, ManagementConnection } from './management';
import { duration, flexibleBoolean } from '../../core/durations';
import { badInput, missing } from '../../core/request';
import { EngineRoute, SecretsRequest } from '../../core/types';
import { checkTemplate, USERNAME_FIELDS } from '../database/template';

const required = (field: string) => z.string({ message: `missing ${field}` }).min(1, `missing ${field}`);

const ConnectionBody = z.object({
  connection_uri: required('connection_uri'),
  username: required('username'),
  password: required('password'),
  verify_connection: flexibleBoolean.optional(),
  password_policy: z.string().optional(),
  username_template: z.string().optional(),
});

/** `config/connection` as stored (sealed by the barrier, the administrator's password included). */
export interface ConnectionConfig extends ManagementConnection {
  readonly verify_connection: boolean;
  readonly password_policy: string;
  /** Vault's template language (the database engine's); empty: `<display name>-<uuid>`. */
  readonly username_template?: string;
}

/** `config/lease` as stored: seconds, 0 meaning the mount's default and maximum. */
export interface LeaseConfig {
  readonly ttl: number;
  readonly max_ttl: number;
}

const CONNECTION = 'config/connection';
const LEASE = 'config/lease';

export const readConnection = (store: SecretsRequest['store']) => store.get<ConnectionConfig>(CONNECTION);
export const readLease = (store: SecretsRequest['store']) => store.get<LeaseConfig>(LEASE);

/** The management API's address; not echoed in errors (a URL may carry credentials). */
function checkUri(uri: string): void {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw badInput("connection_uri: not a URL; use the management API's address such as http://localhost:15672");
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw badInput(`connection_uri: must be an http(s) URL, not ${url.protocol}`);
  if (url.username || url.password) throw badInput('connection_uri: put the credentials in username and password, not in the URL');
}

async function writeConnection(req: SecretsRequest<z.infer<typeof ConnectionBody>>): Promise<undefined> {
  const b = req.body;
  checkUri(b.connection_uri);
  if (b.username_template) {
    const bad = checkTemplate(b.username_template, USERNAME_FIELDS);
    if (bad) throw badInput(`username_template: unable to initialize username template: ${bad}`);
  }
  const config: ConnectionConfig = {
    connection_uri: b.connection_uri,
    username: b.username,
    password: b.password,
    verify_connection: b.verify_connection ?? true,
    // A name in sys/policies/password, looked up when credentials are issued (as the public engine).
    password_policy: b.password_policy ?? '',
    username_template: b.username_template ?? '',
  };
  // As the public service: listing users proves the address and that the user may manage users.
  if (config.verify_connection) {
    try {
      await new ManagementClient(config).listUsers();
    } catch (err) {
      throw badInput(`failed to validate the connection: ${(err as Error).message}`);
    }
  }
  await req.core.context(req.mount).tx((store) => store.put(CONNECTION, config));
  return undefined;
}

const LeaseBody = z.object({ ttl: duration().optional(), max_ttl: duration().optional() });

/** `config/connection` (write; read without the password) and `config/lease`. */
export const configRoutes: EngineRoute[] = [
  {
    pattern: 'config/connection',
    body: ConnectionBody,
    // verify_connection calls the broker: outside any transaction.
    ownTransactions: ['update'],
    write: writeConnection,
    readOnly: true,
    read: async (req) => {
      const c = await readConnection(req.store);
      if (!c) throw missing();
      const { password: _password, ...shown } = c;
      return { data: shown };
    },
  },
  {
    pattern: 'config/lease',
    body: LeaseBody,
    write: async (req: SecretsRequest<z.infer<typeof LeaseBody>>) => {
      const lease: LeaseConfig = { ttl: req.body.ttl ?? 0, max_ttl: req.body.max_ttl ?? 0 };
      if (lease.max_ttl > 0 && lease.ttl > lease.max_ttl) throw badInput(`ttl (${lease.ttl}) must not exceed max_ttl (${lease.max_ttl})`);
      await req.store.put(LEASE, lease);
      return undefined;
    },
    read: async (req) => {
      const lease = await readLease(req.store);
      if (!lease) throw missing();
      return { data: { ttl: lease.ttl, max_ttl: lease.max_ttl } };
    },
  },
];
