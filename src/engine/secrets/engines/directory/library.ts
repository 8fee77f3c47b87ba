import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { Directory } from './directory';
import { accountKey, checkAccountName, libraryOwner, listResponse, roleUsing } from './names';
import { lock, Pending, rotate, stalePending } from './rotation';
import type { DirectoryConfig, DirectoryProfile } from './settings';
import { commaList, duration, flexibleBoolean } from '../../core/durations';
import { badInput, missing } from '../../core/request';
import type { MountStore } from '../../core/store';
import { EngineContext, EngineRoute, LeaseRecord, SecretsRequest, SecretsResponse } from '../../core/types';

const DAY = 24 * 3600;

const SetBody = z.object({
  service_account_names: commaList.optional(),
  ttl: duration().optional(),
  max_ttl: duration().optional(),
  disable_check_in_enforcement: flexibleBoolean.optional(),
});
const CheckOutBody = z.object({ ttl: duration().optional() });
const CheckInBody = z.object({ service_account_names: commaList.optional() });

interface LibrarySet {
  readonly service_account_names: string[];
  /** Seconds; 0 is unlimited. */
  readonly ttl: number;
  readonly max_ttl: number;
  readonly disable_check_in_enforcement: boolean;
}

/** Who holds an account: the check-out's own id (its lease carries it), the borrowing token. */
interface Checkout {
  readonly id: string;
  readonly tokenHash: string;
  readonly accessor: string;
  readonly entityId: string;
}

/** A library account, sealed at `accounts/<key>`; an empty password means Hangar has not set one yet. */
interface LibraryAccount {
  readonly set: string;
  readonly name: string;
  readonly dn: string;
  readonly password: string;
  readonly checkout?: Checkout;
  readonly pending?: Pending;
}

/** What a check-out's lease carries back to the revoke and renew hooks. */
interface CheckoutLease {
  readonly key: string;
  readonly id: string;
}

/** The set; a missing one is a 404 on its own path, and the public service's 400 on the paths under it. */
async function requireSet(store: MountStore, name: string, underIt = true): Promise<LibrarySet> {
  const set = await store.get<LibrarySet>(`library/${name}`);
  if (!set) throw underIt ? badInput(`"${name}" doesn't exist`) : missing();
  return set;
}

/**
 * Lendable: not checked out, with a password Hangar set. A pending mark on a free account comes from
 * the set's first rotation; left by a crash, the stored password may be stale, so the account waits
 * for the set's next write, which rotates it again.
 */
const available = (a: LibraryAccount | undefined) => !!a && !a.checkout && a.password !== '' && !a.pending;

/**
 * Library sets of one engine (`ad`, `ldap`): their routes and the check-out lease's hooks. Sets
 * lend directory accounts; a check-in, the lease's expiry or its revocation sets a new password.
 */
export function library<C extends DirectoryConfig>(p: DirectoryProfile<C>) {
  const setName = (req: SecretsRequest) => p.setName(req.params.name);

  /** Sets a password Hangar knows on an account (through `d`, bound), which also ends any check-out. */
  async function rotateAccount(
    d: Directory,
    ctx: EngineContext,
    config: C,
    key: string,
    dn: string,
    now: () => number,
    check: (a: LibraryAccount) => boolean,
  ) {
    return rotate<LibraryAccount>({
      ctx,
      key: `accounts/${key}`,
      password: await p.newPassword(ctx, config),
      now,
      staleMs: config.request_timeout * 1000,
      check,
      apply: (password) => d.setPassword(dn, password),
      finish: (a, password) => ({ set: a.set, name: a.name, dn: a.dn, password }),
    });
  }

  async function writeSet(req: SecretsRequest<z.infer<typeof SetBody>>): Promise<undefined> {
    const name = setName(req);
    const ctx = req.core.context(req.mount);
    const now = () => req.engine.clock.now();
    const { config, existing } = await ctx.tx(async (store) => ({ config: await p.requireConfig(store), existing: await store.get<LibrarySet>(`library/${name}`) }));
    const b = req.body;
    const names = b.service_account_names ?? existing?.service_account_names;
    if (!names || names.length === 0) throw badInput('service_account_names is required: the directory accounts this set lends');
    names.forEach((n) => checkAccountName('service_account_names', n));
    const keys = names.map((n) => accountKey(config, n));
    if (new Set(keys).size !== keys.length) throw badInput('service_account_names: an account is listed twice');
    const set: LibrarySet = {
      service_account_names: names,
      ttl: b.ttl ?? existing?.ttl ?? DAY,
      max_ttl: b.max_ttl ?? existing?.max_ttl ?? DAY,
      disable_check_in_enforcement: b.disable_check_in_enforcement ?? existing?.disable_check_in_enforcement ?? false,
    };
    if (set.ttl && set.max_ttl && set.ttl > set.max_ttl) throw badInput(`ttl (${set.ttl}) must not exceed max_ttl (${set.max_ttl})`);
    await Directory.with(config, async (d) => {
      // Every account must exist in the directory (spec), asked before anything is written.
      const dns: string[] = [];
      for (const n of names) {
        const found = await d.find(n);
        if (!found) throw badInput(`service_account_names: "${n}" was not found in the directory under ${config.userdn}`);
        dns.push(found.dn);
      }
      const toRotate = await ctx.tx(async (store) => {
        await lock(store, 'accounts');
        await lock(store, `library/${name}`);
        for (const n of names) {
          const owner = await libraryOwner(store, config, n);
          if (owner && owner !== name) throw badInput(`service_account_names: "${n}" already belongs to library set "${owner}"`);
          const role = await roleUsing(store, config, n, p.roles);
          if (role) throw badInput(`service_account_names: "${n}" is the service account of role "${role}"; an account serves one role or one set`);
        }
        const current = (await store.get<LibrarySet>(`library/${name}`))?.service_account_names ?? [];
        for (const old of current) {
          const key = accountKey(config, old);
          if (keys.includes(key)) continue;
          const account = await store.get<LibraryAccount>(`accounts/${key}`);
          if (account?.checkout) throw badInput(`service_account_names: "${old}" is checked out; check it in before removing it from the set`);
          await store.delete(`accounts/${key}`);
          await store.delete(`lock/accounts/${key}`);
        }
        const pending: string[] = [];
        for (let i = 0; i < names.length; i++) {
          const account = await store.get<LibraryAccount>(`accounts/${keys[i]}`);
          if (!account) await store.put(`accounts/${keys[i]}`, { set: name, name: names[i], dn: dns[i], password: '' } satisfies LibraryAccount);
          const unknown = account && !account.checkout && (account.password === '' || stalePending(account, now(), config.request_timeout * 1000));
          if (!account || unknown) pending.push(keys[i]);
        }
        await store.put(`library/${name}`, set);
        return pending;
      });
      // New accounts get a password only Hangar knows before anyone can check them out.
      for (const key of toRotate) await rotateAccount(d, ctx, config, key, dns[keys.indexOf(key)], now, (a) => !a.checkout);
    });
    return undefined;
  }

  async function checkOut(req: SecretsRequest<z.infer<typeof CheckOutBody>>): Promise<SecretsResponse> {
    const name = setName(req);
    const config = await p.requireConfig(req.store);
    await requireSet(req.store, name);
    // Two check-outs must not pick the same account: the set's lock, then its latest state.
    await lock(req.store, `library/${name}`);
    const set = await requireSet(req.store, name);
    for (const n of set.service_account_names) {
      const key = accountKey(config, n);
      const account = await req.store.get<LibraryAccount>(`accounts/${key}`);
      if (!account || !available(account)) continue;
      const caller = req.caller!;
      const checkout: Checkout = { id: randomBytes(12).toString('hex'), tokenHash: caller.entry.idHash, accessor: caller.entry.accessor, entityId: '' };
      await req.store.put(`accounts/${key}`, { ...account, checkout } satisfies LibraryAccount);
      const asked = req.body.ttl ?? 0;
      // A requested ttl above the set's is reduced to it; 0 on the set is unlimited (the mount's maximum).
      const ttl = set.ttl ? (asked ? Math.min(asked, set.ttl) : set.ttl) : asked;
      return {
        data: { service_account_name: account.name, password: account.password },
        lease: { ttl, maxTtl: set.max_ttl, renewable: true, internal: { key, id: checkout.id } satisfies CheckoutLease },
      };
    }
    throw badInput('No service accounts available for check-out.');
  }

  /** Check-in (enforced to the borrowing token unless the set disables it, or `manage`): rotates, then frees. */
  async function checkIn(req: SecretsRequest<z.infer<typeof CheckInBody>>, manage: boolean): Promise<SecretsResponse> {
    const name = setName(req);
    const ctx = req.core.context(req.mount);
    const now = () => req.engine.clock.now();
    const caller = req.caller!;
    const { config, targets } = await ctx.tx(async (store) => {
      const c = await p.requireConfig(store);
      const set = await requireSet(store, name);
      const accounts = new Map<string, LibraryAccount | undefined>();
      for (const n of set.service_account_names) accounts.set(n, await store.get<LibraryAccount>(`accounts/${accountKey(c, n)}`));
      let names = req.body.service_account_names ?? [];
      const enforced = !manage && !set.disable_check_in_enforcement;
      if (names.length === 0) {
        // Without names: the one account the caller may check in (none is a success with nothing).
        names = [...accounts].filter(([, a]) => a?.checkout && (!enforced || a.checkout.tokenHash === caller.entry.idHash)).map(([n]) => n);
        if (names.length > 1) throw badInput('when multiple service accounts are checked out, the "service_account_names" to check in must be provided');
      }
      const byKey = new Map([...accounts].map(([n, a]) => [accountKey(c, n), a]));
      const out: { key: string; name: string; id: string; dn: string }[] = [];
      for (const n of names) {
        const key = accountKey(c, n);
        if (!byKey.has(key)) throw badInput(`service_account_names: "${n}" is not in library set "${name}"`);
        const a = byKey.get(key);
        if (!a?.checkout) continue; // already available: success, not listed
        if (enforced && a.checkout.tokenHash !== caller.entry.idHash) throw badInput(`"${n}" can't be checked in because it wasn't checked out by the caller`);
        out.push({ key, name: a.name, id: a.checkout.id, dn: a.dn });
      }
      return { config: c, targets: out };
    });
    const checkIns: string[] = [];
    if (targets.length) {
      await Directory.with(config, async (d) => {
        for (const t of targets) {
          const result = await rotateAccount(d, ctx, config, t.key, t.dn, now, (a) => a.checkout?.id === t.id);
          if (result !== 'gone' && result !== 'busy') checkIns.push(t.name);
        }
      });
    }
    return { data: { check_ins: checkIns } };
  }

  async function status(req: SecretsRequest): Promise<SecretsResponse> {
    const name = setName(req);
    const config = await p.requireConfig(req.store);
    const set = await requireSet(req.store, name);
    const data: Record<string, unknown> = {};
    for (const n of set.service_account_names) {
      const a = await req.store.get<LibraryAccount>(`accounts/${accountKey(config, n)}`);
      // The borrower's token is shown by its accessor: a status reader must not learn a usable token.
      const c = a?.checkout;
      const borrower = c && { borrower_client_token: c.accessor, ...(c.entityId ? { borrower_entity_id: c.entityId } : {}) };
      data[n] = borrower ? { available: false, ...borrower } : { available: available(a) };
    }
    return { data };
  }

  /** Lease expiry or revocation: the account comes back with a new password, unless already checked in. */
  async function revokeCheckout(lease: LeaseRecord, ctx: EngineContext): Promise<void> {
    const { key, id } = lease.internal as CheckoutLease;
    const { config, account } = await ctx.tx(async (store) => ({ config: await store.get<C>('config'), account: await store.get<LibraryAccount>(`accounts/${key}`) }));
    if (!config || account?.checkout?.id !== id) return;
    const now = () => ctx.engine.clock.now();
    const result = await Directory.with(config, (d) => rotateAccount(d, ctx, config, key, account.dn, now, (a) => a.checkout?.id === id));
    // Another rotation of the account runs (a check-in): retry later, by then it is done or failed.
    if (result === 'busy') throw new Error('the account is being rotated; the check-in is retried');
  }

  /** Renewal: only while the check-out still stands. */
  async function renewCheckout(lease: LeaseRecord, ctx: EngineContext): Promise<void> {
    const { key, id } = lease.internal as CheckoutLease;
    const account = await ctx.tx((store) => store.get<LibraryAccount>(`accounts/${key}`));
    if (account?.checkout?.id !== id) throw new Error('the service account was checked in: its lease cannot be renewed');
  }

  /** `library`, `library/:name` and its check-out, check-in and status; `library/manage/:name/check-in`. */
  const param = p.hierarchical ? '*name' : ':name';
  const routes: EngineRoute[] = [
    {
      pattern: 'library',
      readOnly: true,
      list: (req) => listResponse(req.store, 'library/', p.hierarchical),
    },
    {
      pattern: `library/manage/${param}/check-in`,
      body: CheckInBody,
      ownTransactions: ['update'],
      write: (req) => checkIn(req, true),
    },
    { pattern: `library/${param}/check-out`, body: CheckOutBody, write: checkOut },
    { pattern: `library/${param}/check-in`, body: CheckInBody, ownTransactions: ['update'], write: (req) => checkIn(req, false) },
    { pattern: `library/${param}/status`, readOnly: true, read: status },
    // Last: with hierarchical names `library/*name` also matches the paths above.
    {
      pattern: `library/${param}`,
      body: SetBody,
      ownTransactions: ['create', 'update'],
      // Hierarchical names: LIST library/org/ lists the sets under org/.
      ...(p.hierarchical ? { list: (req: SecretsRequest) => listResponse(req.store, `library/${req.params.name.toLowerCase()}/`, true) } : {}),
      exists: async (req) => {
        try {
          return await req.store.exists(`library/${setName(req)}`);
        } catch {
          return false;
        }
      },
      read: async (req) => ({ data: { ...(await requireSet(req.store, setName(req), false)) } }),
      write: writeSet,
      delete: async (req) => {
        const name = setName(req);
        const config = await req.store.get<C>('config');
        const set = await req.store.get<LibrarySet>(`library/${name}`);
        if (!set) return undefined;
        await lock(req.store, `library/${name}`);
        const keys = set.service_account_names.map((n) => accountKey(config ?? { case_sensitive_names: false }, n));
        for (const [i, key] of keys.entries()) {
          if ((await req.store.get<LibraryAccount>(`accounts/${key}`))?.checkout) {
            throw badInput(`"${set.service_account_names[i]}" can't be deleted because it is currently checked out; check it in first`);
          }
        }
        for (const key of keys) for (const k of [`accounts/${key}`, `lock/accounts/${key}`]) await req.store.delete(k);
        await req.store.delete(`library/${name}`);
        await req.store.delete(`lock/library/${name}`);
        return undefined;
      },
    },
  ];

  return { routes, revoke: revokeCheckout, renew: renewCheckout };
}
