import { openClients, withConnections } from './clients';
import { Outcome, ResourceKind } from './kind';
import { ResourcePayload } from './payload-format';

type Kinds = readonly ResourceKind<any>[];

/**
 * The kinds' modules, loaded in this order until the one asked for is found: a custom resource's
 * process handles one object, and loading every module (the SSH kinds bring sshpk) cost it more
 * than its own work. The registry's and the catalog's kinds, the commonest, come first.
 */
const KIND_MODULES: ReadonlyArray<() => Kinds> = [
  () => [require('./box').boxKind, require('./box-version').boxVersionKind, require('./box-provider').boxProviderKind],
  () => (require('./catalog-kinds') as typeof import('./catalog-kinds')).CATALOG_KINDS,
  () => (require('./secrets-kinds') as typeof import('./secrets-kinds')).SECRETS_KINDS,
  () => (require('./secrets-kv-kinds') as typeof import('./secrets-kv-kinds')).SECRETS_KV_KINDS,
  () => (require('./secrets-pki-kinds') as typeof import('./secrets-pki-kinds')).SECRETS_PKI_KINDS,
  () => (require('./secrets-database-kinds') as typeof import('./secrets-database-kinds')).SECRETS_DATABASE_KINDS,
  () => (require('./secrets-ssh-kinds') as typeof import('./secrets-ssh-kinds')).SECRETS_SSH_KINDS,
  () => (require('./secrets-transform-kinds') as typeof import('./secrets-transform-kinds')).SECRETS_TRANSFORM_KINDS,
  () => (require('./secrets-rabbitmq-kinds') as typeof import('./secrets-rabbitmq-kinds')).SECRETS_RABBITMQ_KINDS,
  () => (require('./secrets-ad-kinds') as typeof import('./secrets-ad-kinds')).SECRETS_AD_KINDS,
];

const loaded: ResourceKind<unknown>[] = [];
let modulesLoaded = 0;

export function kindOf(name: string): ResourceKind<unknown> {
  for (;;) {
    const kind = loaded.find((k) => k.kind === name);
    if (kind) return kind;
    if (modulesLoaded === KIND_MODULES.length) break;
    loaded.push(...KIND_MODULES[modulesLoaded++]());
  }
  throw new Error(`unknown resource kind "${name}"; known kinds: ${loaded.map((k) => k.kind).join(', ')}`);
}

/** The payload's desired state, validated by its kind. */
export function desiredOf(payload: ResourcePayload): unknown {
  const kind = kindOf(payload.kind);
  const result = kind.desired.safeParse(payload.desired ?? {});
  if (!result.success) throw new Error(`${payload.kind} ${payload.key}: ${result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return result.data;
}

/** Brings one object to its desired state. */
export async function apply(payload: ResourcePayload): Promise<Outcome> {
  let result: Outcome | 'failed' | undefined;
  await applyAll([payload], (_, outcome) => (result = outcome));
  return result as Outcome;
}

/**
 * Brings objects to their desired state one after another (the order given: parents first), with one
 * set of clients per connection; `done` hears each outcome. The first failure stops the run: `done`
 * hears "failed" for its object, and the error is thrown.
 */
export async function applyAll(payloads: readonly ResourcePayload[], done: (payload: ResourcePayload, outcome: Outcome | 'failed') => void): Promise<void> {
  await withConnections(async (clientsFor) => {
    for (const payload of payloads) {
      let outcome: Outcome;
      try {
        const desired = desiredOf(payload);
        outcome = await kindOf(payload.kind).upsert(await clientsFor(payload.connection), payload.key, desired);
      } catch (err) {
        done(payload, 'failed');
        throw err;
      }
      done(payload, outcome);
    }
  });
}

/** Deletes one object; succeeds when it is already gone. */
export async function destroy(payload: ResourcePayload): Promise<boolean> {
  const kind = kindOf(payload.kind);
  const clients = await openClients(payload.connection);
  try {
    return await kind.delete(clients, payload.key);
  } finally {
    await clients.close();
  }
}

/** Identity of a managed object across inventories: kind, key and where it lives. */
function identity(p: ResourcePayload): string {
  return JSON.stringify([p.kind, p.key, p.connection.endpoints ?? null, p.connection.dataDir ?? null]);
}

/**
 * Deletes what a stack managed before and no longer declares (Terraform runs no destroy
 * provisioner for a block removed from the configuration). Children go before their parents.
 */
export async function prune(previous: readonly ResourcePayload[], current: readonly ResourcePayload[]): Promise<ResourcePayload[]> {
  const keep = new Set(current.map(identity));
  const gone = previous
    .filter((p) => !keep.has(identity(p)))
    .sort((a, b) => kindOf(b.kind).deleteOrder - kindOf(a.kind).deleteOrder);
  for (const payload of gone) await destroy(payload);
  return gone;
}

export type { Outcome };
