import { z } from 'zod';
import { parsePolicy, policyName, RESPONSE_WRAPPING_POLICY } from '../core/policies';
import { badInput, missing } from '../core/request';
import { EngineRoute, SecretsRequest, SecretsResponse } from '../core/types';

const MAX_POLICY_BYTES = 256 * 1024;

function nameOf(req: SecretsRequest): string {
  try {
    return policyName(req.params.name);
  } catch (err) {
    throw badInput((err as Error).message);
  }
}

async function exists(req: SecretsRequest): Promise<boolean> {
  const name = req.params.name.toLowerCase();
  return name === 'root' || name === 'default' || name === RESPONSE_WRAPPING_POLICY || (await req.db.get('SELECT 1 AS x FROM secrets_policies WHERE name = ?', [name])) !== undefined;
}

async function write(req: SecretsRequest, text: string | undefined, field: string): Promise<undefined> {
  const name = nameOf(req);
  if (text === undefined) throw badInput(`${field} is required: the policy text (HCL or JSON)`);
  if (Buffer.byteLength(text) > MAX_POLICY_BYTES) throw badInput(`${field}: the policy is larger than ${MAX_POLICY_BYTES} bytes`);
  if (name === 'root' || name === RESPONSE_WRAPPING_POLICY) throw badInput(`cannot update the ${name} policy`);
  try {
    parsePolicy(text);
  } catch (err) {
    throw badInput(`failed to parse policy: ${(err as Error).message}`);
  }
  await req.core.policies.put(req.db, name, text);
  return undefined;
}

async function remove(req: SecretsRequest): Promise<undefined> {
  const name = nameOf(req);
  if (name === 'root' || name === 'default' || name === RESPONSE_WRAPPING_POLICY) throw badInput(`cannot delete the ${name} policy`);
  await req.core.policies.delete(req.db, name);
  return undefined;
}

async function read(req: SecretsRequest, field: 'policy' | 'rules'): Promise<SecretsResponse> {
  const p = await req.core.policies.get(req.db, nameOf(req));
  if (!p) throw missing();
  return { data: { name: p.name, [field]: p.text }, topLevel: field === 'rules' };
}

const PolicyBody = z.object({ policy: z.string({ message: 'policy must be a string' }).optional() });
const LegacyBody = z.object({ rules: z.string().optional(), policy: z.string().optional() });

/** `sys/policies/acl/:name` and the older `sys/policy/:name` that many clients still use. */
export const policySystemRoutes: EngineRoute[] = [
  {
    pattern: 'policies/acl',
    readOnly: true,
    list: async (req) => ({ data: { keys: await req.core.policies.names(req.db) } }),
  },
  {
    pattern: 'policies/acl/:name',
    body: PolicyBody,
    readOnly: false,
    exists,
    read: (req) => read(req, 'policy'),
    write: (req) => write(req, (req.body as z.infer<typeof PolicyBody>).policy, 'policy'),
    delete: remove,
  },
  {
    pattern: 'policy',
    readOnly: true,
    read: async (req) => {
      const names = await req.core.policies.names(req.db);
      return { data: { policies: names, keys: names }, topLevel: true };
    },
    list: async (req) => ({ data: { keys: await req.core.policies.names(req.db) } }),
  },
  {
    pattern: 'policy/:name',
    body: LegacyBody,
    exists,
    read: (req) => read(req, 'rules'),
    write: (req) => {
      const b = req.body as z.infer<typeof LegacyBody>;
      return write(req, b.rules ?? b.policy, 'rules');
    },
    delete: remove,
  },
];
