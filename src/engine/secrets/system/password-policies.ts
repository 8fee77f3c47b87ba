import { z } from 'zod';
import {
  deletePasswordPolicy,
  generatePassword,
  parsePasswordPolicy,
  passwordPolicyNames,
  readPasswordPolicy,
  writePasswordPolicy,
} from './password-policy';
import { HangarError } from '../../http/errors';
import { badInput, missing } from '../core/request';
import { EngineRoute, SecretsRequest } from '../core/types';

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
const MAX_POLICY_BYTES = 64 * 1024;

function nameOf(req: SecretsRequest): string {
  const name = req.params.name;
  if (!NAME.test(name)) throw badInput(`name "${name}" is invalid: use letters, digits, ".", "_" and "-"`);
  return name;
}

const PolicyBody = z.object({ policy: z.string({ message: 'policy must be a string' }).optional() });

/** `sys/policies/password/:name` and `.../generate` (Vault's password policies). */
export const passwordPolicySystemRoutes: EngineRoute[] = [
  {
    pattern: 'policies/password',
    readOnly: true,
    list: async (req) => ({ data: { keys: await passwordPolicyNames(req.core, req.db) } }),
  },
  {
    pattern: 'policies/password/:name',
    body: PolicyBody,
    exists: async (req) => NAME.test(req.params.name) && (await readPasswordPolicy(req.core, req.db, req.params.name)) !== undefined,
    read: async (req) => {
      const text = await readPasswordPolicy(req.core, req.db, nameOf(req));
      if (text === undefined) throw missing();
      return { data: { policy: text } };
    },
    write: async (req) => {
      const name = nameOf(req);
      const text = (req.body as z.infer<typeof PolicyBody>).policy;
      if (!text) throw badInput('policy is required: the policy text (HCL with length and rule "charset" blocks)');
      if (Buffer.byteLength(text) > MAX_POLICY_BYTES) throw badInput(`policy: larger than ${MAX_POLICY_BYTES} bytes`);
      try {
        parsePasswordPolicy(text);
      } catch (err) {
        throw badInput(`policy: ${(err as Error).message}`);
      }
      await writePasswordPolicy(req.core, req.db, name, text);
      return undefined;
    },
    delete: async (req) => {
      await deletePasswordPolicy(req.core, req.db, nameOf(req));
      return undefined;
    },
  },
  {
    pattern: 'policies/password/:name/generate',
    readOnly: true,
    read: async (req) => {
      const text = await readPasswordPolicy(req.core, req.db, nameOf(req));
      if (text === undefined) throw new HangarError(404, ['policy does not exist']);
      return { data: { password: generatePassword(parsePasswordPolicy(text)) } };
    },
  },
];
