import { readFileSync } from 'node:fs';
import { request, RequestOptions } from 'node:https';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { guardClientCertificates, loadTls, peerCertificate, serverOptions } from '../../../src/engine/http/tls';
import { tempDir } from '../../helpers/storage';
import { TestCa } from '../../helpers/tls';

/**
 * The verified client certificate on a request (what certificate login will read): an https Fastify
 * app made with the listener's options, as buildApi makes it.
 */
describe('peerCertificate', () => {
  const ca = new TestCa(tempDir());
  const server = ca.issue('server', { chain: true });
  const client = ca.issue('client', { client: true });
  const app = Fastify({
    https: serverOptions(loadTls({
      cert: { path: server.cert, flag: '--tls-cert-file' },
      key: { path: server.key, flag: '--tls-key-file' },
      minVersion: 'tls12',
      clientCa: { path: ca.ca, flag: '--tls-client-ca-file' },
      clientAuth: 'verify-if-given',
    })),
  });
  app.get('/', async (req) => ({ subject: peerCertificate(req)?.subject ?? null }));
  let url: string;

  beforeAll(async () => {
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

  test('is the client certificate the CA signed, and undefined without one', async () => {
    expect(await subject({ cert: readFileSync(client.cert), key: readFileSync(client.key) })).toBe('CN=client');
    expect(await subject({})).toBeNull();
  });

  test('guardClientCertificates leaves a server without client verification alone', () => {
    const plain = loadTls({ cert: { path: server.cert, flag: 'f' }, key: { path: server.key, flag: 'f' }, minVersion: 'tls13', clientAuth: 'none' });
    expect(serverOptions(plain)).toMatchObject({ requestCert: false, rejectUnauthorized: false, minVersion: 'TLSv1.3' });
    const listeners = app.server.listenerCount('secureConnection');
    guardClientCertificates(app.server as never, plain);
    expect(app.server.listenerCount('secureConnection')).toBe(listeners);
  });
});
