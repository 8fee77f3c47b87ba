import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { desiredOf, kindOf } from '.';
import { withConnections } from './clients';
import { differences } from './kind';
import { decodePayload } from './payload';
import { ResourcePayload } from './payload-format';

export interface FieldDrift {
  readonly field: string;
  readonly desired: unknown;
  readonly live: unknown;
}

export interface DriftReport {
  readonly payload: ResourcePayload;
  readonly status: 'in sync' | 'drifted' | 'missing';
  readonly fields: readonly FieldDrift[];
}

/**
 * The desired state of every managed object in a synthesized stack directory (the one holding
 * cdk.tf.json) or in a cdktf.out directory (all its stacks): the payloads of the config resources.
 */
export function desiredStateIn(dir: string): ResourcePayload[] {
  const files = existsSync(join(dir, 'cdk.tf.json'))
    ? [join(dir, 'cdk.tf.json')]
    : existsSync(join(dir, 'stacks'))
      ? readdirSync(join(dir, 'stacks')).map((s) => join(dir, 'stacks', s, 'cdk.tf.json')).filter((f) => existsSync(f))
      : [];
  if (files.length === 0) throw new Error(`no cdk.tf.json in ${dir} or its stacks/: pass a synthesized stack directory or cdktf.out`);
  const payloads: ResourcePayload[] = [];
  for (const file of files) {
    const config = JSON.parse(readFileSync(file, 'utf8')) as { resource?: { null_resource?: Record<string, { triggers?: Record<string, string> }> } };
    for (const resource of Object.values(config.resource?.null_resource ?? {})) {
      const triggers = resource.triggers ?? {};
      // Config resources carry the identity and the full payload; identity resources only kind and key.
      if (triggers.identity !== undefined && triggers.payload !== undefined) payloads.push(decodePayload(triggers.payload, `payload in ${file}`));
    }
  }
  // One object may be applied in steps (a box version, then its release): one desired state.
  const merged = new Map<string, ResourcePayload>();
  for (const p of payloads) {
    const id = JSON.stringify([p.kind, p.key, p.connection]);
    const before = merged.get(id);
    merged.set(id, before ? { ...before, desired: { ...before.desired, ...p.desired } } : p);
  }
  return [...merged.values()];
}

/** Compares each object's desired state with the live one (one set of clients per connection). */
export async function detectDrift(payloads: readonly ResourcePayload[], env: NodeJS.ProcessEnv = process.env): Promise<DriftReport[]> {
  return withConnections(async (clientsFor) => {
    const reports: DriftReport[] = [];
    for (const payload of payloads) {
      const kind = kindOf(payload.kind);
      const desired = desiredOf(payload) as Record<string, unknown>;
      const live = (await kind.read(await clientsFor(payload.connection), payload.key, desired)) as Record<string, unknown> | undefined;
      if (!live) {
        reports.push({ payload, status: 'missing', fields: [] });
        continue;
      }
      const fields = differences(desired, live).map((field) => ({ field, desired: desired[field], live: live[field] }));
      reports.push({ payload, status: fields.length ? 'drifted' : 'in sync', fields });
    }
    return reports;
  }, env);
}
