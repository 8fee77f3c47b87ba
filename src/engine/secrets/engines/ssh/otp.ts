import { createHash, randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import { z } from 'zod';
import { items, readRole, readZeroAddress, roleName, SshRole } from './roles';
import { badInput } from '../../core/request';
import type { MountStore } from '../../core/store';
import { ipAllowed } from '../../core/tokens';
import { EngineRoute, LeaseRecord, EngineContext } from '../../core/types';

/** OTPs are stored under their SHA-256: the entry's path never shows the password. */
const otpKey = (otp: string) => `otp/${createHash('sha256').update(otp).digest('hex')}`;

interface OtpEntry {
  readonly username: string;
  readonly ip: string;
  readonly role_name: string;
}

/** The helper's connectivity check (vault-ssh-helper -verify-only) sends this and expects the echo. */
const ECHO_REQUEST = 'verify-echo-request';
const ECHO_RESPONSE = 'verify-echo-response';

const ip = z.string({ message: 'ip is required' }).refine((v) => isIP(v.trim()) !== 0, { message: 'must be an IP address' }).transform((v) => v.trim());
const CredsBody = z.object({ ip, username: z.string().max(256).optional() });
const LookupBody = z.object({ ip });
const VerifyBody = z.object({ otp: z.string({ message: 'otp is required' }).min(1, 'otp is required').max(256) });

/** Whether an OTP role's CIDR blocks (minus its exclusions) hold the address. */
function roleHolds(role: SshRole, address: string): boolean {
  const cidrs = items(role.cidr_list);
  const excluded = items(role.exclude_cidr_list);
  return cidrs.length > 0 && ipAllowed(address, cidrs) && !(excluded.length && ipAllowed(address, excluded));
}

/** The revoke hook of OTP leases: an OTP not used by then is gone. */
export async function revokeOtp(lease: LeaseRecord, ctx: EngineContext): Promise<void> {
  const { key } = lease.internal as { key: string };
  await ctx.tx((store: MountStore) => store.delete(key));
}

/** `creds/:name`, `lookup`, `verify` and `tidy/dynamic-keys`. */
export const otpRoutes: EngineRoute[] = [
  {
    pattern: 'creds/:name',
    body: CredsBody,
    write: async (req) => {
      const b = req.body as z.infer<typeof CredsBody>;
      const name = roleName(req);
      const role = await readRole(req, name);
      if (!role) throw badInput(`Role "${name}" not found`);
      if (role.key_type !== 'otp') throw badInput(`role "${name}" has key_type ${role.key_type}: use sign/${name} or issue/${name} for ca roles`);
      const username = b.username || role.default_user;
      const allowed = items(role.allowed_users);
      if (allowed.length && role.allowed_users.trim() !== '*' && username !== role.default_user && !allowed.includes(username)) {
        throw badInput(`username: "${username}" is not in the role's allowed_users`);
      }
      if (!(await readZeroAddress(req.store)).includes(name) && !roleHolds(role, b.ip)) {
        throw badInput(`ip: ${b.ip} does not belong to role "${name}" (cidr_list)`);
      }
      const otp = randomUUID();
      const key = otpKey(otp);
      await req.store.put(key, { username, ip: b.ip, role_name: name } satisfies OtpEntry);
      return {
        data: { key_type: 'otp', key: otp, username, ip: b.ip, port: role.port },
        lease: { renewable: false, internal: { key } },
      };
    },
  },
  {
    pattern: 'lookup',
    body: LookupBody,
    write: async (req) => {
      const address = (req.body as z.infer<typeof LookupBody>).ip;
      const roles: string[] = [];
      for (const name of await req.store.list('roles/')) {
        const role = await readRole(req, name);
        if (role?.key_type === 'otp' && roleHolds(role, address)) roles.push(name);
      }
      return { data: { roles: [...new Set([...roles, ...(await readZeroAddress(req.store))])] } };
    },
  },
  {
    pattern: 'verify',
    body: VerifyBody,
    unauthenticated: true,
    write: async (req) => {
      const { otp } = req.body as z.infer<typeof VerifyBody>;
      if (otp === ECHO_REQUEST) return { data: { message: ECHO_RESPONSE } };
      const key = otpKey(otp);
      const entry = await req.store.get<OtpEntry>(key);
      if (!entry) throw badInput('OTP not found');
      // Single use: the entry goes in the same transaction that answers.
      if (!(await req.store.delete(key))) throw badInput('OTP not found');
      return { data: { username: entry.username, ip: entry.ip, role_name: entry.role_name } };
    },
  },
  {
    pattern: 'tidy/dynamic-keys',
    delete: async (req) => {
      // Host keys of the removed dynamic-key feature; this engine never stores any, so only old data goes.
      const names = (await req.store.list('keys/')).filter((k) => !k.endsWith('/'));
      for (const n of names) await req.store.delete(`keys/${n}`);
      return { data: { message: `Removed ${names.length} of ${names.length} host keys.` } };
    },
  },
];
