import { boxKind } from './box';
import { boxProviderKind } from './box-provider';
import { boxVersionKind } from './box-version';
import { CATALOG_KINDS } from './catalog-kinds';
import { openClients } from './clients';
import { Outcome, ResourceKind } from './kind';
import { ResourcePayload } from './payload-format';
import { SECRETS_AD_KINDS } from './secrets-ad-kinds';
import { SECRETS_DATABASE_KINDS } from './secrets-database-kinds';
import { SECRETS_KINDS } from './secrets-kinds';
import { SECRETS_KV_KINDS } from './secrets-kv-kinds';
import { SECRETS_PKI_KINDS } from './secrets-pki-kinds';
import { SECRETS_RABBITMQ_KINDS } from './secrets-rabbitmq-kinds';
import { SECRETS_SSH_KINDS } from './secrets-ssh-kinds';
import { SECRETS_TRANSFORM_KINDS } from './secrets-transform-kinds';

const KINDS: readonly ResourceKind<unknown>[] = [
  boxKind as ResourceKind<unknown>,
  boxVersionKind as ResourceKind<unknown>,
  boxProviderKind as ResourceKind<unknown>,
  ...(SECRETS_KINDS as readonly ResourceKind<any>[]),
  ...(SECRETS_PKI_KINDS as readonly ResourceKind<any>[]),
  ...(SECRETS_RABBITMQ_KINDS as readonly ResourceKind<any>[]),
  ...(SECRETS_SSH_KINDS as readonly ResourceKind<any>[]),
  ...(SECRETS_TRANSFORM_KINDS as readonly ResourceKind<any>[]),
  ...(SECRETS_DATABASE_KINDS as readonly ResourceKind<any>[]),
  ...(SECRETS_AD_KINDS as readonly ResourceKind<any>[]),
  ...(SECRETS_KV_KINDS as readonly ResourceKind<any>[]),
  ...(CATALOG_KINDS as readonly ResourceKind<any>[]),
];

export function kindOf(name: string): ResourceKind<unknown> {
  const kind = KINDS.find((k) => k.kind === name);
  if (!kind) throw new Error(`unknown resource kind "${name}"; known kinds: ${KINDS.map((k) => k.kind).join(', ')}`);
  return kind;
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
  const kind = kindOf(payload.kind);
  const desired = desiredOf(payload);
  const clients = await openClients(payload.connection);
  try {
    return await kind.upsert(clients, payload.key, desired);
  } finally {
    await clients.close();
  }
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
