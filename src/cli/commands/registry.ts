import { resolve } from 'node:path';
import type { RegistryClient } from '../../client/registry';
import { defaultDataDir } from '../../engine/data-dir';
import { CommandSpec, OptionSpec, ParsedOptions } from '../options';
import { UsageError } from '../usage';

/** Where an admin command acts: a data directory (in-process) or a running server. */
export const targetOptions: Record<string, OptionSpec> = {
  data: { type: 'string', env: 'HANGAR_DATA', placeholder: 'DIR', help: 'Act on this data directory (default ~/.local/share/hangar)' },
  address: { type: 'string', env: 'HANGAR_ADDRESS', placeholder: 'URL', help: 'Act on a running server: its registry URL, e.g. http://127.0.0.1:8080' },
  token: { type: 'string', env: 'HANGAR_TOKEN', placeholder: 'TOKEN', help: 'Root token, with --address' },
};

export const createUserCommand: CommandSpec = {
  name: 'registry create-user',
  summary: 'Creates a registry user who can then log in (POST /api/v1/authenticate) and own boxes.',
  usage: 'hangar registry create-user NAME --password PASSWORD [--email EMAIL] [--phone NUMBER] [--data DIR | --address URL --token TOKEN]',
  positionals: ['name'],
  options: {
    password: { type: 'string', env: 'HANGAR_USER_PASSWORD', placeholder: 'PASSWORD', help: 'The password (at least 8 characters)' },
    email: { type: 'string', placeholder: 'EMAIL', help: 'E-mail address (also a login)' },
    phone: { type: 'string', placeholder: 'NUMBER', help: 'Phone number for two-factor codes' },
    ...targetOptions,
  },
};

export const createOrgCommand: CommandSpec = {
  name: 'registry create-org',
  summary: 'Creates an organization; its owner (and later members) may manage its boxes.',
  usage: 'hangar registry create-org NAME --owner USER [--data DIR | --address URL --token TOKEN]',
  positionals: ['name'],
  options: {
    owner: { type: 'string', placeholder: 'USER', help: 'The user who owns the organization' },
    ...targetOptions,
  },
};

export async function withRegistry<T>(options: ParsedOptions, fn: (client: RegistryClient) => Promise<T>): Promise<T> {
  if (options.address && options.data) throw new UsageError('give either --data or --address, not both');
  const token = options.address ? (options.token as string | undefined) : undefined;
  if (options.address && !token) throw new UsageError('--address needs --token (or HANGAR_TOKEN): the root token');
  const { openTransport } = require('../../client/open') as typeof import('../../client/open');
  const { RegistryClient } = require('../../client/registry') as typeof import('../../client/registry');
  const transport = await openTransport(
    options.address
      ? { endpoints: { registry: options.address as string } }
      : { dataDir: resolve((options.data as string | undefined) ?? defaultDataDir()) },
  );
  try {
    return await fn(new RegistryClient(transport, token));
  } finally {
    await transport.close();
  }
}

export async function runCreateUser(options: ParsedOptions, [name]: string[]): Promise<number> {
  const password = options.password as string | undefined;
  if (!password) throw new UsageError('--password is required (or HANGAR_USER_PASSWORD)');
  const user = await withRegistry(options, (c) =>
    c.createUser({ username: name, password, email: options.email as string | undefined, phone: options.phone as string | undefined }),
  );
  process.stdout.write(`created user ${user.username}\n`);
  return 0;
}

export async function runCreateOrg(options: ParsedOptions, [name]: string[]): Promise<number> {
  const owner = options.owner as string | undefined;
  if (!owner) throw new UsageError('--owner is required');
  const org = await withRegistry(options, (c) => c.createOrganization(name, owner));
  process.stdout.write(`created organization ${org.username} owned by ${owner}\n`);
  return 0;
}
