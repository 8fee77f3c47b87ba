import { readFileSync, writeFileSync } from 'node:fs';
import { request, RequestOptions } from 'node:https';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:tls';
import Fastify from 'fastify';
import { makeDevTls } from '../../../src/engine/http/dev-tls';
import { loadTls, peerCertificate, prepareTlsServer, serverOptions } from '../../../src/engine/http/tls';
import { tempDir } from '../../helpers/storage';
import { TestCa } from '../../helpers/tls';

/**
 * A listener's https server, made as buildApi and listen() make it: the verified client certificate on
 * a request (what certificate login will read), and answers to clients that half-close.
 */
describe('a TLS listener', () => {
  const ca = new TestCa(tempDir());
  const server = ca.issue('server', { chain: true });
  const client = ca.issue('client', { client: true });
  const tls = loadTls({
    cert: { path: server.cert, flag: '--tls-cert-file' },
    key: { path: server.key, flag: '--tls-key-file' },
    minVersion: 'tls12',
    clientCa: { path: ca.ca, flag: '--tls-client-ca-file' },
    clientAuth: 'verify-if-given',
  });
  const app = Fastify({ https: serverOptions(tls) });
  app.get('/', async (req) => ({ subject: peerCertificate(req)?.subject ?? null }));
  app.get('/slow', async () => {
    await new Promise((resolve) => setTimeout(resolve, 20));
    return { slow: true };
  });
  let url: string;

  beforeAll(async () => {
    prepareTlsServer(app.server as never, tls);
    await app.listen({ host: '127.0.0.1', port: 0 });
    url = `https://127.0.0.1:${(app.server.address() as AddressInfo).port}/`;
  });
  afterAll(() => app.close());

  function subject(options: RequestOptions): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const req = request(url, { agent: false, ca: readFileSync(ca.ca), ...options }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve(JSON.parse(body).subject));
      });
      req.on('error', reject);
      req.end();
    });
  }

  test('peerCertificate is the client certificate the CA signed, and undefined without one', async () => {
    expect(await subject({ cert: readFileSync(client.cert), key: readFileSync(client.key) })).toBe('CN=client');
    expect(await subject({})).toBeNull();
  });

  test('a client that ends its side after the request still gets the answer of a route that waits', async () => {
    const { port } = app.server.address() as AddressInfo;
    const answers = await Promise.all(Array.from({ length: 20 }, () => new Promise<string>((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port, ca: readFileSync(ca.ca) }, () => socket.end('GET /slow HTTP/1.1\r\nHost: localhost\r\n\r\n'));
      let answer = '';
      socket.setEncoding('utf8').on('data', (chunk: string) => (answer += chunk));
      socket.on('error', reject);
      socket.on('close', () => resolve(answer.split('\r\n')[0]));
    })));
    expect(new Set(answers)).toEqual(new Set(['HTTP/1.1 200 OK']));
  });

  test('without client verification, no client certificate is asked for', () => {
    const plain = loadTls({ cert: { path: server.cert, flag: 'f' }, key: { path: server.key, flag: 'f' }, minVersion: 'tls13', clientAuth: 'none' });
    expect(serverOptions(plain)).toMatchObject({ requestCert: false, rejectUnauthorized: false, minVersion: 'TLSv1.3' });
  });
});

describe('--dev-tls files', () => {
  test('a data directory keeps its dev CA between starts while it is good for another day, and gets a new one after', async () => {
    const dir = tempDir('hangar-dev-tls-');
    const first = await makeDevTls(dir);
    const ca = readFileSync(first.ca, 'utf8');
    // The files load as a listener's (the key is the certificate's, the chain ends with the CA).
    expect(() => loadTls({ cert: { path: first.cert, flag: '--dev-tls' }, key: { path: first.key, flag: '--dev-tls' }, minVersion: 'tls12', clientAuth: 'none' })).not.toThrow();
    await makeDevTls(dir);
    expect(readFileSync(first.ca, 'utf8')).toBe(ca);
    // A day before the certificate ends (it lasts a year): new files.
    await makeDevTls(dir, new Date(Date.now() + 365 * 86_400_000 - 3_600_000));
    expect(readFileSync(first.ca, 'utf8')).not.toBe(ca);
    // A damaged key: new files too.
    writeFileSync(first.key, 'not a key');
    const before = readFileSync(first.ca, 'utf8');
    await makeDevTls(dir);
    expect(readFileSync(first.ca, 'utf8')).not.toBe(before);
    expect(readFileSync(first.key, 'utf8')).toMatch(/PRIVATE KEY/);
  });
});
