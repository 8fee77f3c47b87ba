import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { CallResult, ROOT_TOKEN, TestServer } from '../../helpers/server';

export const as = (token: string) => ({ authorization: `Bearer ${token}` });

/** A registry client for tests: one user's token, calls that fail loudly on an unexpected status. */
export function registry(server: TestServer, token?: string) {
  const headers = token ? as(token) : {};
  const call = (method: string, path: string, body?: unknown) => server.call('registry', method, path, { body, headers });
  const expectOk = async (res: Promise<CallResult>, status = 200) => {
    const r = await res;
    if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${r.text}`);
    return r.body;
  };
  return {
    call,
    createBox: (username: string, name: string, extra: Record<string, unknown> = {}) =>
      expectOk(call('POST', '/api/v1/boxes', { box: { username, name, ...extra } })),
    createVersion: (tag: string, version: string, description?: string) =>
      expectOk(call('POST', `/api/v1/box/${tag}/versions`, { version: { version, description } })),
    createProvider: (tag: string, version: string, provider: Record<string, unknown>) =>
      expectOk(call('POST', `/api/v1/box/${tag}/version/${version}/providers`, { provider })),
    release: (tag: string, version: string) => expectOk(call('PUT', `/api/v1/box/${tag}/version/${version}/release`)),
    revoke: (tag: string, version: string) => expectOk(call('PUT', `/api/v1/box/${tag}/version/${version}/revoke`)),
    /** A released version with one provider pointing at an external URL. */
    async publishedBox(tag: string, version = '1.0.0', extra: Record<string, unknown> = {}) {
      const [username, name] = tag.split('/');
      await this.createBox(username, name, { is_private: false, ...extra });
      await this.createVersion(tag, version);
      await this.createProvider(tag, version, { name: 'virtualbox', url: 'https://example.com/box.box' });
      await this.release(tag, version);
    },
  };
}

/** PUTs a file body to a URL as the Vagrant CLI does: no Content-Type, no token. */
export async function putFile(url: string, body: Buffer | AsyncIterable<Buffer>, headers: Record<string, string> = {}) {
  const res = await request(url, { method: 'PUT', body: body as Buffer, headers });
  const text = await res.body.text();
  let parsed: any = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.statusCode, headers: res.headers, body: parsed, text };
}

/** The files of the blob store outside tmp/, and those inside it. */
export function blobFiles(dataDir: string): { stored: string[]; partial: string[] } {
  const root = join(dataDir, 'blobs');
  const list = (dir: string): string[] => {
    try {
      return readdirSync(dir);
    } catch {
      return [];
    }
  };
  const stored = list(root)
    .filter((d) => d !== 'tmp')
    .flatMap((d) => list(join(root, d)));
  return { stored, partial: list(join(root, 'tmp')) };
}

/** Sets owner flags as the administrator. */
export async function adminOwner(server: TestServer, username: string, owner: Record<string, unknown>) {
  const res = await server.call('registry', 'PUT', `/api/v1/admin/owners/${username}`, { body: { owner }, headers: as(ROOT_TOKEN) });
  if (res.status !== 200) throw new Error(`admin owner: ${res.status} ${res.text}`);
  return res.body;
}
