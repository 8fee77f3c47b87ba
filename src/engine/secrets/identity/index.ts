import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { Group, GroupAlias, IdentityStore } from './store';
import { commaList, rfc3339 } from '../core/durations';
import { policyName } from '../core/policies';
import { badInput, missing } from '../core/request';
import { EngineRoute, EngineType, SecretsRequest, SecretsResponse } from '../core/types';

/**
 * `identity/`: a minimal identity store, the part that external groups need. Groups carry policies;
 * an external group's alias names it at one auth mount, and a login whose groups claim holds that
 * name gets the group's policies as `identity_policies`. Entities and internal group membership
 * are stored and shown but grant nothing (there are no entities).
 */

const NAME_MAX = 256;
const name = z.string().min(1, 'must not be empty').max(NAME_MAX, `must be at most ${NAME_MAX} characters`);
const id = z.string().regex(/^[A-Za-z0-9-]{1,64}$/, 'must be letters, digits and "-", at most 64');
const ids = commaList.pipe(z.array(id).max(1000, 'at most 1000 ids'));

const GroupBody = z.object({
  id: id.optional(),
  name: name.optional(),
  type: z.enum(['internal', 'external'], { message: 'must be internal or external' }).optional(),
  policies: commaList.pipe(z.array(z.string()).max(1000, 'at most 1000 policies')).optional(),
  metadata: z.record(z.string(), z.string()).nullish(),
  member_group_ids: ids.optional(),
  member_entity_ids: ids.optional(),
});
type GroupBody = z.infer<typeof GroupBody>;

const AliasBody = z.object({
  id: id.optional(),
  name: name.optional(),
  mount_accessor: z.string().max(NAME_MAX).optional(),
  canonical_id: id.optional(),
});
type AliasBody = z.infer<typeof AliasBody>;

const LookupBody = z.object({
  id: z.string().max(NAME_MAX).optional(),
  name: z.string().max(NAME_MAX).optional(),
  alias_id: z.string().max(NAME_MAX).optional(),
  alias_name: z.string().max(NAME_MAX).optional(),
  alias_mount_accessor: z.string().max(NAME_MAX).optional(),
});
type LookupBody = z.infer<typeof LookupBody>;

const identity = (req: SecretsRequest) => new IdentityStore(req.store);

/**
 * `identity/lookup/group`: one group by `id`, `name`, `alias_id`, or `alias_name` with
 * `alias_mount_accessor`, with Vault's refusals; no content when none matches.
 */
async function lookupGroup(req: SecretsRequest<LookupBody>): Promise<SecretsResponse | undefined> {
  const b = req.body;
  const given = (['id', 'name', 'alias_id', 'alias_name', 'alias_mount_accessor'] as const).filter((k) => b[k]);
  if (given.length === 0) throw badInput('query parameters not supplied');
  const byAlias = b.alias_name && b.alias_mount_accessor;
  if (given.length > 1 && !(given.length === 2 && byAlias)) throw badInput('query parameter conflict; please supply distinct set of query parameters');
  if (given.length === 1 && (b.alias_name || b.alias_mount_accessor)) throw badInput("both 'alias_name' and 'alias_mount_accessor' needs to be set");
  const store = identity(req);
  const byAliasOf = async () => {
    const alias = b.alias_id ? await store.alias(b.alias_id) : await store.aliasByName(b.alias_mount_accessor!, b.alias_name!);
    return alias && store.group(alias.canonicalId);
  };
  const group = b.id ? await store.group(b.id) : b.name ? await store.groupByName(b.name) : await byAliasOf();
  return group ? { data: await groupData(req, group) } : undefined;
}

function groupPolicyNames(policies: readonly string[]): string[] {
  const out = new Set<string>();
  for (const p of policies) {
    let n: string;
    try {
      n = policyName(p);
    } catch (err) {
      throw badInput(`policies: ${(err as Error).message}`);
    }
    if (n === 'root') throw badInput('policies: the root policy cannot be given to a group');
    out.add(n);
  }
  return [...out].sort();
}

/** Creates or updates a group; `target` is the group the path names (by id or name), if any. */
async function writeGroup(req: SecretsRequest<GroupBody>, target: Group | undefined, pathName?: string): Promise<SecretsResponse | undefined> {
  const b = req.body;
  const store = identity(req);
  const newName = b.name ?? target?.name ?? pathName ?? `group_${randomUUID()}`;
  const clash = await store.groupByName(newName);
  if (clash && clash.id !== target?.id) throw badInput(`name: a group named "${newName}" already exists`);
  const type = b.type ?? target?.type ?? 'internal';
  if (target && type !== target.type) throw badInput(`type: a group's type cannot be changed (it is ${target.type})`);
  const memberGroupIds = b.member_group_ids ?? target?.memberGroupIds ?? [];
  const memberEntityIds = b.member_entity_ids ?? target?.memberEntityIds ?? [];
  if (type === 'external' && (memberGroupIds.length || memberEntityIds.length)) {
    throw badInput('member_entity_ids and member_group_ids cannot be set on an external group: its members come from logins');
  }
  const group: Group = {
    id: target?.id ?? b.id ?? randomUUID(),
    name: newName,
    type,
    policies: b.policies ? groupPolicyNames(b.policies) : target?.policies ?? [],
    metadata: b.metadata === null ? {} : b.metadata ?? target?.metadata ?? {},
    memberGroupIds: [...new Set(memberGroupIds)],
    memberEntityIds: [...new Set(memberEntityIds)],
    ...(target?.aliasId ? { aliasId: target.aliasId } : {}),
    creationTime: target?.creationTime ?? req.now,
    lastUpdateTime: req.now,
    modifyIndex: (target?.modifyIndex ?? 0) + 1,
  };
  if (!target && (await store.group(group.id))) throw badInput(`id: a group with id "${group.id}" already exists`);
  await store.putGroup(group, target);
  // Vault answers a creation with the new ids and an update with no content.
  return target ? undefined : { data: { id: group.id, name: group.name } };
}

async function groupData(req: SecretsRequest, g: Group): Promise<Record<string, unknown>> {
  const alias = g.aliasId ? await identity(req).alias(g.aliasId) : undefined;
  return {
    alias: alias ? await aliasData(req, alias) : {},
    creation_time: rfc3339(g.creationTime),
    id: g.id,
    last_update_time: rfc3339(g.lastUpdateTime),
    member_entity_ids: g.memberEntityIds,
    member_group_ids: g.memberGroupIds,
    metadata: Object.keys(g.metadata).length ? g.metadata : null,
    modify_index: g.modifyIndex,
    name: g.name,
    namespace_id: 'root',
    parent_group_ids: [],
    policies: g.policies,
    type: g.type,
  };
}

async function aliasData(req: SecretsRequest, a: GroupAlias): Promise<Record<string, unknown>> {
  const mount = (await req.core.mounts.all(req.db)).find((m) => m.accessor === a.mountAccessor);
  return {
    canonical_id: a.canonicalId,
    creation_time: rfc3339(a.creationTime),
    id: a.id,
    last_update_time: rfc3339(a.lastUpdateTime),
    merged_from_canonical_ids: null,
    metadata: null,
    mount_accessor: a.mountAccessor,
    mount_path: mount?.path ?? '',
    mount_type: mount?.type ?? '',
    name: a.name,
    namespace_id: 'root',
  };
}

/** Creates or updates a group alias; `target` is the alias the path names, if any. */
async function writeAlias(req: SecretsRequest<AliasBody>, target: GroupAlias | undefined): Promise<SecretsResponse | undefined> {
  const b = req.body;
  const store = identity(req);
  const aliasName = b.name ?? target?.name;
  const accessor = b.mount_accessor ?? target?.mountAccessor;
  const canonicalId = b.canonical_id ?? target?.canonicalId;
  if (!aliasName) throw badInput('name is required');
  if (!accessor) throw badInput('mount_accessor is required');
  if (!canonicalId) throw badInput('canonical_id is required: the id of an external group');
  const mount = (await req.core.mounts.all(req.db)).find((m) => m.accessor === accessor);
  if (!mount || mount.kind !== 'auth') throw badInput(`mount_accessor: no auth method has the accessor "${accessor}"`);
  const group = await store.group(canonicalId);
  if (!group) throw badInput(`canonical_id: no group has the id "${canonicalId}"`);
  if (group.type !== 'external') throw badInput(`canonical_id: group "${group.name}" is internal; only external groups have aliases`);
  if (group.aliasId && group.aliasId !== target?.id) throw badInput(`canonical_id: group "${group.name}" already has an alias`);
  const clash = await store.aliasByName(accessor, aliasName);
  if (clash && clash.id !== target?.id) throw badInput(`name: the alias "${aliasName}" already exists at mount ${mount.path}`);
  const alias: GroupAlias = {
    id: target?.id ?? b.id ?? randomUUID(),
    name: aliasName,
    mountAccessor: accessor,
    canonicalId,
    creationTime: target?.creationTime ?? req.now,
    lastUpdateTime: req.now,
  };
  if (!target && (await store.alias(alias.id))) throw badInput(`id: an alias with id "${alias.id}" already exists`);
  await store.putAlias(alias, target);
  // The alias moves with its canonical id: the old group loses it, the new one gets it.
  if (target && target.canonicalId !== canonicalId) {
    const old = await store.group(target.canonicalId);
    if (old) await store.putGroup({ ...old, aliasId: undefined }, old);
  }
  if (group.aliasId !== alias.id) await store.putGroup({ ...group, aliasId: alias.id, lastUpdateTime: req.now }, group);
  return { data: { canonical_id: canonicalId, id: alias.id } };
}

async function deleteAlias(req: SecretsRequest, alias: GroupAlias | undefined): Promise<undefined> {
  if (alias) await identity(req).deleteAlias(alias, req.now);
  return undefined;
}

const byId = (req: SecretsRequest) => identity(req).group(req.params.id);
const byName = (req: SecretsRequest) => identity(req).groupByName(req.params.name);
const aliasById = (req: SecretsRequest) => identity(req).alias(req.params.id);

async function found<T>(lookup: Promise<T | undefined>): Promise<T> {
  const value = await lookup;
  if (value === undefined) throw missing();
  return value;
}

async function listGroups(req: SecretsRequest, by: 'id' | 'name'): Promise<SecretsResponse> {
  const store = identity(req);
  const groups: Group[] = [];
  for (const gid of await store.groupIds()) {
    const g = await store.group(gid);
    if (g) groups.push(g);
  }
  if (groups.length === 0) throw missing();
  if (by === 'name') return { data: { keys: groups.map((g) => g.name).sort() } };
  const info = (g: Group) => ({ name: g.name, num_member_entities: g.memberEntityIds.length, num_parent_groups: 0 });
  const keyInfo = Object.fromEntries(groups.map((g) => [g.id, info(g)]));
  return { data: { keys: groups.map((g) => g.id), key_info: keyInfo } };
}

async function listAliases(req: SecretsRequest): Promise<SecretsResponse> {
  const store = identity(req);
  const keyInfo: Record<string, unknown> = {};
  for (const aid of await store.aliasIds()) {
    const a = await store.alias(aid);
    if (a) keyInfo[a.id] = { canonical_id: a.canonicalId, mount_accessor: a.mountAccessor, name: a.name };
  }
  if (Object.keys(keyInfo).length === 0) throw missing();
  return { data: { keys: Object.keys(keyInfo), key_info: keyInfo } };
}

const routes: EngineRoute[] = [
  { pattern: 'lookup/group', body: LookupBody, readOnly: true, write: lookupGroup },
  {
    pattern: 'group',
    body: GroupBody,
    write: async (req) => {
      const b = req.body as GroupBody;
      const store = identity(req);
      const target = (b.id ? await store.group(b.id) : undefined) ?? (b.name ? await store.groupByName(b.name) : undefined);
      return writeGroup(req, target);
    },
  },
  { pattern: 'group/id', readOnly: true, list: (req) => listGroups(req, 'id') },
  {
    pattern: 'group/id/:id',
    body: GroupBody,
    exists: async (req) => (await byId(req)) !== undefined,
    read: async (req) => ({ data: await groupData(req, await found(byId(req))) }),
    write: async (req) => writeGroup(req, await found(byId(req))),
    delete: async (req) => {
      const g = await byId(req);
      if (g) await identity(req).deleteGroup(g);
      return undefined;
    },
  },
  { pattern: 'group/name', readOnly: true, list: (req) => listGroups(req, 'name') },
  {
    pattern: 'group/name/:name',
    body: GroupBody,
    exists: async (req) => (await byName(req)) !== undefined,
    read: async (req) => ({ data: await groupData(req, await found(byName(req))) }),
    write: async (req) => writeGroup(req, await byName(req), req.params.name),
    delete: async (req) => {
      const g = await byName(req);
      if (g) await identity(req).deleteGroup(g);
      return undefined;
    },
  },
  {
    pattern: 'group-alias',
    body: AliasBody,
    write: async (req) => {
      const b = req.body as AliasBody;
      return writeAlias(req, b.id ? await identity(req).alias(b.id) : undefined);
    },
  },
  { pattern: 'group-alias/id', readOnly: true, list: listAliases },
  {
    pattern: 'group-alias/id/:id',
    body: AliasBody,
    exists: async (req) => (await aliasById(req)) !== undefined,
    read: async (req) => ({ data: await aliasData(req, await found(aliasById(req))) }),
    write: async (req) => writeAlias(req, await found(aliasById(req))),
    delete: async (req) => deleteAlias(req, await aliasById(req)),
  },
];

export const identityEngine: EngineType = {
  type: 'identity',
  kind: 'secret',
  description: 'identity store',
  routes,
};
