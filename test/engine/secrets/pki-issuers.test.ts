import { X509Certificate } from 'node:crypto';
import { ROOT_TOKEN, startSecrets, SecretsTestServer } from './helpers';
import { Openssl } from './pki-helpers';
import { ManualClock } from '../../../src/engine/clock';
import { MountStore } from '../../../src/engine/secrets/core/store';
import { runDueAutoTidy } from '../../../src/engine/secrets/engines/pki/revoke';
import { secretsCore } from '../../../src/engine/secrets/service';
import { STORAGE_KINDS } from '../../helpers/storage';

const openssl = new Openssl();

/** Several issuers and keys per mount (the public service since 1.11), and mounts stored before them. */
describe.each(STORAGE_KINDS)('PKI issuers and keys on %s', (kind) => {
  let s: SecretsTestServer;
  beforeAll(async () => {
    s = await startSecrets(kind, { clock: new ManualClock(Date.now()) });
  });
  afterAll(() => s.close());

  const ok = async (method: string, path: string, body?: unknown, status = 200) => {
    const res = await s.v(method, path, body);
    if (res.status !== status) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
    return res.body;
  };

  /** A JSON merge patch (what `vault patch` sends). */
  const patch = async (path: string, body: unknown) => {
    const res = await fetch(`${s.urls.secrets}/v1/${path}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json', 'x-vault-token': ROOT_TOKEN },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  };

  /** Runs fn on a mount's sealed store in one transaction (to write what an earlier version stored). */
  async function withStore<T>(mount: string, fn: (store: MountStore) => Promise<T>): Promise<T> {
    const core = await secretsCore(s.engine);
    return s.engine.storage.tx(async (db) => fn(core.store(db, (await core.mounts.get(db, mount))!)));
  }

  test('roots and keys: each generate a new issuer; defaults; names; lists with key_info; raw reads', async () => {
    await ok('POST', 'sys/mounts/multi', { type: 'pki', config: { max_lease_ttl: '87600h' } }, 204);
    const a = (await ok('POST', 'multi/root/generate/internal', { common_name: 'Root A', issuer_name: 'root-a', key_name: 'key-a', key_type: 'ec', ttl: '8760h' })).data;
    const b = (await ok('POST', 'multi/issuers/generate/root/internal', { common_name: 'Root B', issuer_name: 'root-b', key_type: 'ec', ttl: '48h' })).data;
    expect(a).toMatchObject({ issuer_name: 'root-a', key_name: 'key-a' });
    expect(b.issuer_id).not.toBe(a.issuer_id);
    expect(b.key_id).not.toBe(a.key_id);
    expect((await s.v('POST', 'multi/root/generate/internal', { common_name: 'x', issuer_name: 'root-a' })).text).toMatch(/issuer name already in use/);
    expect((await s.v('POST', 'multi/root/generate/internal', { common_name: 'x', issuer_name: 'default' })).text).toMatch(/reserved keyword/);

    const issuers = (await ok('LIST', 'multi/issuers')).data;
    expect(issuers.keys.sort()).toEqual([a.issuer_id, b.issuer_id].sort());
    expect(issuers.key_info[a.issuer_id]).toMatchObject({ issuer_name: 'root-a', is_default: true, key_id: a.key_id });
    expect(issuers.key_info[b.issuer_id]).toMatchObject({ issuer_name: 'root-b', is_default: false });
    expect((await ok('GET', 'multi/config/issuers')).data).toEqual({ default: a.issuer_id, default_follows_latest_issuer: false });
    expect((await ok('GET', 'multi/config/keys')).data).toEqual({ default: a.key_id });
    const keys = (await ok('LIST', 'multi/keys')).data;
    expect(keys.key_info[a.key_id]).toEqual({ key_name: 'key-a' });

    const read = (await ok('GET', 'multi/issuer/root-b')).data;
    expect(read).toMatchObject({
      issuer_id: b.issuer_id,
      issuer_name: 'root-b',
      key_id: b.key_id,
      certificate: b.certificate,
      ca_chain: [b.certificate],
      manual_chain: null,
      leaf_not_after_behavior: 'err',
      usage: 'crl-signing,issuing-certificates,ocsp-signing,read-only',
      revocation_signature_algorithm: '',
      revoked: false,
      issuing_certificates: [],
      crl_distribution_points: [],
      ocsp_servers: [],
      enable_aia_url_templating: false,
    });
    expect((await s.v('GET', `multi/issuer/${b.issuer_id}/pem`, undefined, null)).text).toBe(b.certificate);
    expect((await s.v('GET', 'multi/issuer/root-b/json', undefined, null)).body.data).toMatchObject({ certificate: b.certificate, issuer_id: b.issuer_id });
    const der = await fetch(`${s.urls.secrets}/v1/multi/issuer/root-b/der`);
    expect(new X509Certificate(Buffer.from(await der.arrayBuffer())).subject).toBe('CN=Root B');
    expect((await s.v('GET', 'multi/issuer/nope')).text).toMatch(/unable to find PKI issuer for reference: nope/);
    expect((await ok('GET', `multi/key/${a.key_id}`)).data).toMatchObject({ key_id: a.key_id, key_name: 'key-a', key_type: 'ec' });

    // A new key, then a root on it (existing); the default issuer moves with config/issuers.
    const k = (await ok('POST', 'multi/keys/generate/internal', { key_name: 'spare', key_type: 'ec', key_bits: 384 })).data;
    expect(k).toMatchObject({ key_name: 'spare', key_type: 'ec' });
    const c = (await ok('POST', 'multi/issuers/generate/root/existing', { common_name: 'Root C', key_ref: 'spare', issuer_name: 'root-c', ttl: '24h' })).data;
    expect(c.key_id).toBe(k.key_id);
    expect((await s.v('DELETE', 'multi/key/spare')).text).toMatch(/Key in Use by Issuer/);
    expect((await ok('POST', 'multi/config/issuers', { default: 'root-c' })).data).toEqual({ default: c.issuer_id, default_follows_latest_issuer: false });
    expect((await s.v('GET', 'multi/ca/pem', undefined, null)).text).toBe(c.certificate);
    await ok('POST', 'multi/root/replace', { default: 'root-a' });
    expect((await s.v('GET', 'multi/ca/pem', undefined, null)).text).toBe(a.certificate);
  });

  test('issue and sign through the role issuer_ref or issuer/:ref; usage, leaf_not_after_behavior and AIA per issuer; CRLs per issuer', async () => {
    const rootA = (await ok('GET', 'multi/issuer/root-a')).data.certificate;
    const rootB = (await ok('GET', 'multi/issuer/root-b')).data.certificate;
    await ok('POST', 'multi/roles/on-b', { allow_any_name: true, key_type: 'ec', issuer_ref: 'root-b', ttl: '1h' });
    await ok('POST', 'multi/roles/on-default', { allow_any_name: true, key_type: 'ec', ttl: '1h' });
    const viaRole = (await ok('POST', 'multi/issue/on-b', { common_name: 'b.example.com' })).data;
    expect(viaRole.issuing_ca).toBe(rootB);
    expect((await openssl.verify(rootB, viaRole.certificate)).code).toBe(0);
    const viaDefault = (await ok('POST', 'multi/issue/on-default', { common_name: 'a.example.com' })).data;
    expect((await openssl.verify(rootA, viaDefault.certificate)).code).toBe(0);
    const viaPath = (await ok('POST', 'multi/issuer/root-b/issue/on-default', { common_name: 'p.example.com' })).data;
    expect(viaPath.issuing_ca).toBe(rootB);

    // root-b lives 48h: past it, err by default; truncate cuts to its notAfter; per-issuer URLs go into its certificates.
    expect((await s.v('POST', 'multi/issue/on-b', { common_name: 'b.example.com', ttl: '72h' })).text).toMatch(/beyond the expiration of the CA/);
    const updated = (await ok('POST', 'multi/issuer/root-b', {
      issuer_name: 'root-b', leaf_not_after_behavior: 'truncate', issuing_certificates: 'http://pki.example.com/b.der',
    })).data;
    expect(updated).toMatchObject({ leaf_not_after_behavior: 'truncate', issuing_certificates: ['http://pki.example.com/b.der'] });
    const cut = (await ok('POST', 'multi/issue/on-b', { common_name: 'b.example.com', ttl: '72h' })).data;
    expect(new X509Certificate(cut.certificate).validTo).toBe(new X509Certificate(rootB).validTo);
    expect(await openssl.text(cut.certificate)).toMatch(/CA Issuers - URI:http:\/\/pki.example.com\/b.der/);
    // PATCH changes only what it names.
    const patched = await patch('multi/issuer/root-b', { usage: 'read-only,crl-signing' });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ usage: 'crl-signing,read-only', leaf_not_after_behavior: 'truncate' });
    expect((await s.v('POST', 'multi/issue/on-b', { common_name: 'b.example.com' })).text).toMatch(/requested usage issuing-certificates/);
    expect((await patch('multi/issuer/root-b', { usage: 'read-only,issuing-certificates,crl-signing,ocsp-signing' })).status).toBe(200);
    expect((await s.v('POST', 'multi/issuer/root-b', { usage: 'bogus' })).text).toMatch(/usage/);
    expect((await s.v('POST', 'multi/issuer/root-b', { leaf_not_after_behavior: 'sometimes' })).text).toMatch(/leaf_not_after_behavior/);

    // Revoking a certificate of root-b lists it on root-b's CRL only.
    await ok('POST', 'multi/revoke', { serial_number: viaRole.serial_number });
    const crlB = (await ok('GET', 'multi/issuer/root-b/crl')).data.crl;
    const crlA = (await s.v('GET', 'multi/issuer/root-a/crl/pem', undefined, null)).text;
    const serialHex = viaRole.serial_number.replace(/:/g, '').toUpperCase();
    expect((await openssl.run('crl', '-noout', '-text', '-in', openssl.file(crlB))).out.replace(/^0+/, '')).toContain(serialHex.replace(/^0+/, ''));
    expect((await openssl.run('crl', '-noout', '-text', '-in', openssl.file(crlA))).out).not.toContain(serialHex.replace(/^0+/, ''));
    expect((await openssl.run('crl', '-noout', '-verify', '-CAfile', openssl.file(rootB), '-in', openssl.file(crlB))).out).toMatch(/verify OK/);
  });

  test('an intermediate on its own mount: set-signed imports it; chain built; cross-sign CSR; issuer revoke and delete', async () => {
    await ok('POST', 'sys/mounts/multi_int', { type: 'pki', config: { max_lease_ttl: '87600h' } }, 204);
    const csr = (await ok('POST', 'multi_int/issuers/generate/intermediate/internal', { common_name: 'Int', key_name: 'int-key' })).data;
    const signed = (await ok('POST', 'multi/issuer/root-a/sign-intermediate', { csr: csr.csr, ttl: '720h' })).data;
    const rootA = (await ok('GET', 'multi/issuer/root-a')).data.certificate;
    const set = (await ok('POST', 'multi_int/intermediate/set-signed', { certificate: signed.certificate })).data;
    expect(set.imported_issuers).toHaveLength(1);
    expect(set.mapping[set.imported_issuers[0]]).toBe(csr.key_id);
    // The root imported after: the intermediate's chain now reaches it.
    await ok('POST', 'multi_int/issuers/import/cert', { pem_bundle: rootA });
    const int = (await ok('GET', `multi_int/issuer/${set.imported_issuers[0]}`)).data;
    expect(int.ca_chain).toEqual([signed.certificate, rootA]);
    expect((await s.v('GET', 'multi_int/ca_chain', undefined, null)).text).toBe(`${signed.certificate}\n${rootA}`);

    const cross = (await ok('POST', 'multi_int/intermediate/cross-sign', { common_name: 'Int', key_ref: 'int-key' })).data;
    expect(cross.key_id).toBe(csr.key_id);
    expect((await openssl.run('req', '-verify', '-noout', '-in', openssl.file(cross.csr))).code).toBe(0);

    // Revoking an issuer: on its parent's CRL, no longer issuing.
    const revoked = (await ok('POST', 'multi/issuer/root-c/revoke')).data;
    expect(revoked).toMatchObject({ revoked: true, usage: 'crl-signing,ocsp-signing,read-only' });
    expect(revoked.revocation_time).toBeGreaterThan(0);
    const gone = await s.v('DELETE', 'multi/issuer/root-c');
    expect(gone.status).toBe(204);
    expect((await ok('LIST', 'multi/issuers')).data.keys).toHaveLength(2);
    await ok('POST', 'multi/key/spare', { key_name: 'renamed' });
    await ok('DELETE', 'multi/key/renamed', undefined, 204);
    expect((await s.v('GET', 'multi/key/renamed')).status).toBe(400);
  });

  test('a mount stored before issuers reads as one issuer and key, keeps working, and is rewritten on its first change', async () => {
    await ok('POST', 'sys/mounts/legacy', { type: 'pki', config: { max_lease_ttl: '87600h' } }, 204);
    const root = (await ok('POST', 'legacy/root/generate/exported', { common_name: 'Old Root', key_type: 'ec', ttl: '8760h' })).data;
    // What an earlier version stored: `ca` (certificate, PKCS#8 key, chain), `crl`, no `issuers`.
    await withStore('legacy/', async (store) => {
      const pkcs8 = (await import('node:crypto')).createPrivateKey(root.private_key).export({ type: 'pkcs8', format: 'pem' }).toString();
      await store.put('ca', { certificate: root.certificate, privateKey: pkcs8, chain: [] });
      await store.put('crl', (await store.get(`crls/${root.issuer_id}`))!);
      await store.delete('issuers');
      for (const id of await store.list('crls/')) await store.delete(`crls/${id}`);
    });
    const listed = (await ok('LIST', 'legacy/issuers')).data;
    expect(listed.keys).toHaveLength(1);
    const id = listed.keys[0];
    const name = `current-${Math.floor(new Date(new X509Certificate(root.certificate).validFrom).getTime() / 1000)}`;
    expect(listed.key_info[id]).toMatchObject({ issuer_name: name, is_default: true });
    expect((await ok('LIST', 'legacy/issuers')).data.keys).toEqual([id]);
    expect((await s.v('GET', 'legacy/crl/pem', undefined, null)).status).toBe(200);
    await ok('POST', 'legacy/roles/r', { allow_any_name: true, key_type: 'ec' });
    const leaf = (await ok('POST', 'legacy/issue/r', { common_name: 'old.example.com', ttl: '1h' })).data;
    expect((await openssl.verify(root.certificate, leaf.certificate)).code).toBe(0);
    await ok('POST', 'legacy/revoke', { serial_number: leaf.serial_number });

    await ok('POST', `legacy/issuer/${name}`, { issuer_name: 'renamed' });
    const after = await withStore('legacy/', async (store) => ({ ca: await store.exists('ca'), issuers: await store.exists('issuers'), crl: await store.exists('crl') }));
    expect(after).toEqual({ ca: false, issuers: true, crl: false });
    expect((await ok('GET', 'legacy/issuer/renamed')).data).toMatchObject({ issuer_id: id, certificate: root.certificate });
    expect((await ok('POST', 'legacy/issue/r', { common_name: 'old.example.com', ttl: '1h' })).data.issuing_ca).toBe(root.certificate);
    expect((await ok('LIST', 'legacy/certs/revoked')).data.keys).toEqual([leaf.serial_number]);
  });

  test('config/auto-tidy (every field, read back), tidy-status, tidy-cancel; the background round tidies when the interval has passed', async () => {
    await ok('POST', 'sys/mounts/tidy', { type: 'pki', config: { max_lease_ttl: '87600h' } }, 204);
    expect((await ok('GET', 'tidy/tidy-status')).data).toMatchObject({ state: 'Inactive', time_started: null, cert_store_deleted_count: null, last_auto_tidy_finished: '0001-01-01T00:00:00Z' });
    expect((await ok('GET', 'tidy/config/auto-tidy')).data).toEqual({
      enabled: false,
      interval_duration: 43200,
      min_startup_backoff_duration: 300,
      max_startup_backoff_duration: 900,
      tidy_cert_store: false,
      tidy_revoked_certs: false,
      tidy_revoked_cert_issuer_associations: false,
      tidy_expired_issuers: false,
      tidy_move_legacy_ca_bundle: false,
      tidy_acme: false,
      safety_buffer: 259200,
      issuer_safety_buffer: 31536000,
      acme_account_safety_buffer: 2592000,
      pause_duration: '0s',
      publish_stored_certificate_count_metrics: false,
      maintain_stored_certificate_counts: false,
      tidy_revocation_queue: false,
      revocation_queue_safety_buffer: 172800,
      tidy_cross_cluster_revoked_certs: false,
      tidy_cert_metadata: false,
      tidy_cmpv2_nonce_store: false,
    });
    expect((await s.v('POST', 'tidy/config/auto-tidy', { enabled: true })).text).toMatch(/no tidy operations were requested/);
    const set = (await ok('POST', 'tidy/config/auto-tidy', { enabled: true, tidy_cert_store: true, interval_duration: '1h', safety_buffer: '1s' })).data;
    expect(set).toMatchObject({ enabled: true, tidy_cert_store: true, interval_duration: 3600, safety_buffer: 1 });
    expect((await ok('GET', 'tidy/config/auto-tidy')).data).toEqual(set);

    await ok('POST', 'tidy/root/generate/internal', { common_name: 'Tidy Root', key_type: 'ec', ttl: '8760h' });
    await ok('POST', 'tidy/roles/r', { allow_any_name: true, key_type: 'ec' });
    await ok('POST', 'tidy/issue/r', { common_name: 'short.example.com', ttl: '60s' });
    const before = (await ok('LIST', 'tidy/certs')).data.keys.length;
    s.clock.advance(30 * 60 * 1000);
    await runDueAutoTidy(s.engine, await secretsCore(s.engine));
    expect((await ok('LIST', 'tidy/certs')).data.keys).toHaveLength(before);
    s.clock.advance(31 * 60 * 1000);
    await runDueAutoTidy(s.engine, await secretsCore(s.engine));
    expect((await ok('LIST', 'tidy/certs')).data.keys).toHaveLength(before - 1);
    const status = (await ok('GET', 'tidy/tidy-status')).data;
    expect(status).toMatchObject({ state: 'Finished', tidy_cert_store: true, safety_buffer: 1, cert_store_deleted_count: 1, revoked_cert_deleted_count: 0, pause_duration: '0s' });
    expect(status.last_auto_tidy_finished).not.toBe('0001-01-01T00:00:00Z');
    expect((await ok('POST', 'tidy/tidy-cancel')).warnings[0]).toMatch(/none is currently running/);
    expect((await ok('GET', 'tidy/config/cluster')).data).toEqual({ path: '', aia_path: '' });
    expect((await ok('POST', 'tidy/config/cluster', { path: 'https://vault.example.com/v1/tidy' })).data).toEqual({ path: 'https://vault.example.com/v1/tidy', aia_path: '' });
    // AIA templating per issuer: the cluster path and the issuer id go into the certificates.
    const id = (await ok('GET', 'tidy/issuer/default')).data.issuer_id;
    await ok('POST', 'tidy/issuer/default', { enable_aia_url_templating: true, issuing_certificates: '{{cluster_aia_path}}/issuer/{{issuer_id}}/der' });
    const templated = (await ok('POST', 'tidy/issue/r', { common_name: 'aia.example.com', ttl: '1h' })).data;
    expect(await openssl.text(templated.certificate)).toContain(`CA Issuers - URI:https://vault.example.com/v1/tidy/issuer/${id}/der`);
    // config/urls too, for issuers without URLs of their own.
    await ok('POST', 'tidy/issuer/default', {});
    await ok('POST', 'tidy/config/urls', { enable_templating: true, crl_distribution_points: '{{cluster_path}}/issuer/{{issuer_id}}/crl/der' }, 204);
    expect((await ok('GET', 'tidy/config/urls')).data).toMatchObject({ enable_templating: true, crl_distribution_points: ['{{cluster_path}}/issuer/{{issuer_id}}/crl/der'] });
    const mountTemplated = (await ok('POST', 'tidy/issue/r', { common_name: 'aia.example.com', ttl: '1h' })).data;
    expect(await openssl.text(mountTemplated.certificate)).toContain(`URI:https://vault.example.com/v1/tidy/issuer/${id}/crl/der`);
  });
});
