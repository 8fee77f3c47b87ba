import type { Db } from '../../storage';
import type { SecretsCore } from '../core/core';
import type { MountStore } from '../core/store';

/** The built-in mount of the identity store. */
export const IDENTITY_MOUNT = 'identity/';

/** A group of the identity store (`identity/group`). */
export interface Group {
  readonly id: string;
  readonly name: string;
  readonly type: 'internal' | 'external';
  readonly policies: readonly string[];
  readonly metadata: Readonly<Record<string, string>>;
  readonly memberGroupIds: readonly string[];
  readonly memberEntityIds: readonly string[];
  readonly aliasId?: string;
  readonly creationTime: number;
  readonly lastUpdateTime: number;
  readonly modifyIndex: number;
}

/** A group alias (`identity/group-alias`): the name of an external group at one auth mount. */
export interface GroupAlias {
  readonly id: string;
  readonly name: string;
  readonly mountAccessor: string;
  readonly canonicalId: string;
  readonly creationTime: number;
  readonly lastUpdateTime: number;
}

/**
 * Keys in the identity mount's sealed store. Names are indexed lowercased: the identity store is
 * case-insensitive, as Vault's is by default.
 */
const key = {
  group: (id: string) => `group/id/${id}`,
  groupName: (name: string) => `group/name/${encodeURIComponent(name.toLowerCase())}`,
  alias: (id: string) => `alias/id/${id}`,
  aliasName: (accessor: string, name: string) => `alias/name/${encodeURIComponent(accessor)}/${encodeURIComponent(name.toLowerCase())}`,
};

/** Groups and group aliases in one mount store. */
export class IdentityStore {
  constructor(private readonly store: MountStore) {}

  group(id: string): Promise<Group | undefined> {
    return this.store.get<Group>(key.group(id));
  }

  async groupByName(name: string): Promise<Group | undefined> {
    const id = await this.store.get<string>(key.groupName(name));
    return id === undefined ? undefined : this.group(id);
  }

  async groupIds(): Promise<string[]> {
    return (await this.store.list('group/id/')).sort();
  }

  async putGroup(group: Group, previous?: Group): Promise<void> {
    if (previous && previous.name.toLowerCase() !== group.name.toLowerCase()) await this.store.delete(key.groupName(previous.name));
    await this.store.put(key.group(group.id), group);
    await this.store.put(key.groupName(group.name), group.id);
  }

  async deleteGroup(group: Group): Promise<void> {
    const alias = group.aliasId ? await this.alias(group.aliasId) : undefined;
    if (alias) {
      await this.store.delete(key.alias(alias.id));
      await this.store.delete(key.aliasName(alias.mountAccessor, alias.name));
    }
    await this.store.delete(key.group(group.id));
    await this.store.delete(key.groupName(group.name));
  }

  alias(id: string): Promise<GroupAlias | undefined> {
    return this.store.get<GroupAlias>(key.alias(id));
  }

  async aliasByName(accessor: string, name: string): Promise<GroupAlias | undefined> {
    const id = await this.store.get<string>(key.aliasName(accessor, name));
    return id === undefined ? undefined : this.alias(id);
  }

  async aliasIds(): Promise<string[]> {
    return (await this.store.list('alias/id/')).sort();
  }

  async putAlias(alias: GroupAlias, previous?: GroupAlias): Promise<void> {
    if (previous) await this.store.delete(key.aliasName(previous.mountAccessor, previous.name));
    await this.store.put(key.alias(alias.id), alias);
    await this.store.put(key.aliasName(alias.mountAccessor, alias.name), alias.id);
  }

  /** Deletes an alias and clears it from its group. */
  async deleteAlias(alias: GroupAlias, now: number): Promise<void> {
    await this.store.delete(key.alias(alias.id));
    await this.store.delete(key.aliasName(alias.mountAccessor, alias.name));
    const group = await this.group(alias.canonicalId);
    if (group?.aliasId === alias.id) await this.putGroup({ ...group, aliasId: undefined, lastUpdateTime: now }, group);
  }

  /** The aliases of an auth mount being disabled. */
  async deleteAliasesOfMount(accessor: string, now: number): Promise<void> {
    for (const id of await this.aliasIds()) {
      const alias = await this.alias(id);
      if (alias?.mountAccessor === accessor) await this.deleteAlias(alias, now);
    }
  }
}

/** The identity store of a transaction. */
export async function identityStore(core: SecretsCore, db: Db): Promise<IdentityStore | undefined> {
  const mount = await core.mounts.get(db, IDENTITY_MOUNT);
  return mount && new IdentityStore(core.store(db, mount));
}

/**
 * The external groups whose aliases at an auth mount carry one of the given names (the values of
 * a login's groups claim): their ids go on the token.
 */
export async function externalGroupIds(core: SecretsCore, db: Db, mountAccessor: string, names: readonly string[]): Promise<string[]> {
  const identity = names.length ? await identityStore(core, db) : undefined;
  if (!identity) return [];
  const ids = new Set<string>();
  for (const name of names) {
    const alias = await identity.aliasByName(mountAccessor, name);
    const group = alias && (await identity.group(alias.canonicalId));
    if (group?.type === 'external') ids.add(group.id);
  }
  return [...ids].sort();
}

/**
 * The policies a token gets from its groups, read at each request (as Vault does), so a change to a
 * group's policies applies to tokens already issued, and a deleted group grants nothing.
 */
export async function groupPolicies(core: SecretsCore, db: Db, groupIds: readonly string[] | undefined): Promise<string[]> {
  const identity = groupIds?.length ? await identityStore(core, db) : undefined;
  if (!identity) return [];
  const policies = new Set<string>();
  for (const id of groupIds!) for (const p of (await identity.group(id))?.policies ?? []) policies.add(p);
  return [...policies].sort();
}
