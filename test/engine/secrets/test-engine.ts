import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { z } from 'zod';
import { Engine } from '../../../src/engine/engine';
import { HangarError } from '../../../src/engine/http/errors';
import { EngineType } from '../../../src/engine/secrets/core/types';
import { secretsCore } from '../../../src/engine/secrets/service';

/**
 * A small secrets engine for the core's tests, through the real plug-in interface: `creds/:name`
 * issues a password and a private key under a lease, its revoke hook deletes them (or fails while
 * `config` says so), `items/:name` is plain CRUD with an existence check.
 */
export const testEngine: EngineType = {
  type: 'hangar-test',
  kind: 'secret',
  description: 'test engine',
  routes: [
    {
      pattern: 'config',
      body: z.object({ fail_revocations: z.boolean().optional() }),
      exists: (req) => req.store.exists('config'),
      read: async (req) => ({ data: (await req.store.get('config')) ?? {} }),
      write: async (req) => {
        await req.store.put('config', req.body);
        return undefined;
      },
    },
    {
      pattern: 'creds/:name',
      read: async (req) => {
        const id = randomBytes(8).toString('hex');
        const password = `pw-${randomBytes(16).toString('hex')}`;
        const privateKey = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
        await req.store.put(`issued/${id}`, { name: req.params.name, password, privateKey });
        return { data: { id, password, private_key: privateKey }, lease: { ttl: 3600, internal: { id } } };
      },
    },
    { pattern: 'issued', list: async (req) => ({ data: { keys: await req.store.list('issued/') } }) },
    { pattern: 'revoked', list: async (req) => ({ data: { keys: await req.store.list('revoked/') } }) },
    {
      pattern: 'items/:name',
      body: z.object({ value: z.string() }),
      exists: (req) => req.store.exists(`items/${req.params.name}`),
      read: async (req) => {
        const v = await req.store.get<Record<string, unknown>>(`items/${req.params.name}`);
        if (!v) throw new HangarError(404, []);
        return { data: v };
      },
      write: async (req) => {
        await req.store.put(`items/${req.params.name}`, req.body);
        return undefined;
      },
      delete: async (req) => {
        await req.store.delete(`items/${req.params.name}`);
        return undefined;
      },
    },
    { pattern: 'items', list: async (req) => ({ data: { keys: await req.store.list('items/') } }) },
    {
      // Queues work to run once the request committed; each run is recorded in afterCommitRuns.
      pattern: 'after-commit/:name',
      write: async (req) => {
        const { name } = req.params;
        await req.store.put(`after-commit/${name}`, {});
        req.afterCommit(async () => void afterCommitRuns.push(name));
        return undefined;
      },
    },
  ],
  async revoke(lease, ctx) {
    const { id } = lease.internal as { id: string };
    await ctx.tx(async (store) => {
      const config = await store.get<{ fail_revocations?: boolean }>('config');
      if (config?.fail_revocations) throw new Error('the test system is down');
      await store.delete(`issued/${id}`);
      await store.put(`revoked/${id}`, { at: ctx.now });
    });
  },
};

/** The names of `after-commit/:name` writes whose after-commit work ran, in order. */
export const afterCommitRuns: string[] = [];

/** Registers the test engine and mounts it at `path`. */
export async function mountTestEngine(engine: Engine, v: (m: string, p: string, b?: unknown) => Promise<{ status: number; text: string }>, path = 'test') {
  (await secretsCore(engine)).register(testEngine);
  const res = await v('POST', `sys/mounts/${path}`, { type: 'hangar-test' });
  if (res.status !== 204) throw new Error(`mount: ${res.status} ${res.text}`);
}
