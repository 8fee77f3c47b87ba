import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { jose, Jose } from '../../../src/engine/jwt-keys';

export interface TestKey {
  readonly kid: string;
  readonly alg: string;
  readonly privateKey: Awaited<ReturnType<Jose['generateKeyPair']>>['privateKey'];
  readonly publicJwk: Record<string, unknown>;
  readonly publicPem: string;
}

export async function newKey(kid: string, alg = 'RS256'): Promise<TestKey> {
  const { generateKeyPair, exportJWK, exportSPKI } = jose();
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, alg, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' }, publicPem: await exportSPKI(publicKey) };
}

/** A signed JWT; times in seconds relative to `now` (ms). */
export async function sign(key: TestKey, claims: Record<string, unknown>, now: number, header: Record<string, unknown> = {}): Promise<string> {
  const { SignJWT } = jose();
  const nowSec = Math.floor(now / 1000);
  return new SignJWT({ iat: nowSec, exp: nowSec + 300, ...claims })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT', ...header })
    .sign(key.privateKey);
}

/** An unsigned token (`alg: none`). */
export function unsigned(claims: Record<string, unknown>): string {
  const enc = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  return `${enc({ alg: 'none', typ: 'JWT' })}.${enc(claims)}.`;
}

/** A JWKS served on loopback; `keys` can be swapped to rotate; counts fetches. */
export async function jwksServer(keys: TestKey[]): Promise<{ url: string; set(keys: TestKey[]): void; fetches(): number; close(): Promise<void> }> {
  let current = keys;
  let count = 0;
  const server: Server = createServer((_req, res) => {
    count++;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ keys: current.map((k) => k.publicJwk) }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`,
    set: (k) => void (current = k),
    fetches: () => count,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
