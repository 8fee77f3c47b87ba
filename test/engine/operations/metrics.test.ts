import { ROOT_TOKEN, startTestServer, TestServer, userWithToken } from '../../helpers/server';
import { STORAGE_KINDS } from '../../helpers/storage';

/** A sample of the Prometheus text exposition format: name, labels, value. */
interface Sample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

/** Parses the text exposition format strictly: every line a comment (HELP/TYPE) or a sample. */
function parseExposition(text: string): { samples: Sample[]; types: Map<string, string> } {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n').filter(Boolean)) {
    const type = /^# TYPE (\w+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) {
      types.set(type[1], type[2]);
      continue;
    }
    if (/^# HELP \w+ .*$/.test(line)) continue;
    const m = /^(\w+)(?:\{(.*)\})? (-?[\d.e+-]+|NaN|Nan|[+-]Inf)$/.exec(line);
    if (!m) throw new Error(`not the exposition format: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, k, v] of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[k] = v;
    samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return { samples, types };
}

const find = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));

describe.each(STORAGE_KINDS)('metrics (%s)', (kind) => {
  let server: TestServer;
  const root = { authorization: `Bearer ${ROOT_TOKEN}` };

  beforeAll(async () => {
    server = await startTestServer(kind);
    expect((await server.call('secrets', 'GET', '/v1/sys/health')).status).toBe(200);
    expect((await server.call('catalog', 'PUT', '/v1/session/create', { body: { Name: 'm' }, headers: root })).status).toBe(200);
    await server.engine.scheduler.runOnce();
  });
  afterAll(() => server.close());

  async function scrape(api: 'registry' | 'secrets' | 'catalog', path: string) {
    const res = await server.call(api, 'GET', path, { headers: root });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    return parseExposition(res.text);
  }

  test('the three listeners serve one engine\'s metrics in the exposition format', async () => {
    const secrets = await scrape('secrets', '/v1/sys/metrics?format=prometheus');
    const catalog = await scrape('catalog', '/v1/agent/metrics?format=prometheus');
    const registry = await scrape('registry', '/metrics');
    for (const { samples, types } of [secrets, catalog, registry]) {
      expect(types.get('hangar_http_requests_total')).toBe('counter');
      expect(types.get('hangar_http_request_duration_seconds')).toBe('histogram');
      expect(find(samples, 'process_cpu_user_seconds_total')).toHaveLength(1);
    }
    const { samples } = registry;
    // Requests by route pattern, with latency histograms.
    expect(find(samples, 'hangar_http_requests_total', { api: 'secrets', method: 'GET', route: '/v1/sys/health', status: '200' })[0].value).toBe(1);
    expect(find(samples, 'hangar_http_requests_total', { api: 'catalog', route: '/v1/session/create' })[0].value).toBe(1);
    expect(find(samples, 'hangar_http_request_duration_seconds_count', { api: 'secrets', route: '/v1/sys/metrics' })[0].value).toBe(1);
    expect(find(samples, 'hangar_http_request_duration_seconds_bucket', { api: 'catalog', route: '/v1/agent/metrics', le: '+Inf' })[0].value).toBe(1);
    // Storage, background jobs, leases, sessions, blocking queries.
    expect(find(samples, 'hangar_storage_transaction_duration_seconds_count', { mode: 'write', outcome: 'commit' })[0].value).toBeGreaterThan(0);
    expect(find(samples, 'hangar_background_job_runs_total', { outcome: 'ok' }).length).toBeGreaterThan(0);
    expect(find(samples, 'hangar_catalog_sessions')[0].value).toBe(1);
    expect(find(samples, 'hangar_secrets_leases')[0].value).toBe(0);
    expect(find(samples, 'hangar_catalog_blocking_queries')[0].value).toBe(0);
  });

  test('raw paths never become labels: unknown paths stay under their pattern', async () => {
    for (const path of ['/v1/no-such-mount-1/x', '/v1/no-such-mount-2/y']) expect((await server.call('secrets', 'GET', path, { headers: root })).status).toBe(404);
    expect((await server.call('registry', 'GET', '/api/v1/user/nobody-here')).status).toBe(404);
    const { samples } = await scrape('registry', '/metrics');
    const routes = new Set(find(samples, 'hangar_http_requests_total').map((s) => s.labels.route));
    expect([...routes].filter((r) => /no-such|nobody/.test(r))).toEqual([]);
    expect(routes).toContain('/api/v1/user/:username');
    expect(find(samples, 'hangar_http_requests_total', { api: 'secrets', route: '/v1/*', status: '404' })[0].value).toBe(2);
  });

  test('a waiting blocking query is counted while it waits', async () => {
    const put = await server.call('catalog', 'PUT', '/v1/kv/watched', { raw: 'a', headers: root });
    expect(put.status).toBe(200);
    const first = await server.call('catalog', 'GET', '/v1/kv/watched', { headers: root });
    const waiting = server.call('catalog', 'GET', `/v1/kv/watched?index=${first.headers['x-consul-index']}&wait=30s`, { headers: root });
    while (server.engine.metrics === undefined || !(await blockingQueries())) await new Promise((r) => setImmediate(r));
    expect(await blockingQueries()).toBe(1);
    expect((await server.call('catalog', 'PUT', '/v1/kv/watched', { raw: 'b', headers: root })).status).toBe(200);
    expect((await waiting).status).toBe(200);
    expect(await blockingQueries()).toBe(0);
  });

  async function blockingQueries(): Promise<number> {
    const { samples } = await scrape('catalog', '/v1/agent/metrics?format=prometheus');
    return find(samples, 'hangar_catalog_blocking_queries')[0].value;
  }

  test('without format=prometheus: the public services\' JSON (Gauges, Counters, Samples)', async () => {
    for (const [api, path] of [['secrets', '/v1/sys/metrics'], ['catalog', '/v1/agent/metrics'], ['registry', '/metrics?format=json']] as const) {
      const res = await server.call(api, 'GET', path, { headers: root });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ Timestamp: expect.stringMatching(/ \+0000 UTC$/), Gauges: expect.any(Array), Counters: expect.any(Array), Samples: expect.any(Array) });
      expect(res.body.Gauges).toContainEqual({ Name: 'hangar_catalog_sessions', Value: 1, Labels: {} });
      expect(res.body.Samples).toContainEqual(expect.objectContaining({ Name: 'hangar_http_request_duration_seconds', Count: expect.any(Number), Mean: expect.any(Number) }));
    }
    const bad = await server.call('secrets', 'GET', '/v1/sys/metrics?format=xml', { headers: root });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatch(/^format: /);
  });

  test('each endpoint enforces its permission', async () => {
    // Secrets: read on sys/metrics.
    expect((await server.call('secrets', 'GET', '/v1/sys/metrics?format=prometheus')).status).toBe(403);
    const limited = await server.call('secrets', 'POST', '/v1/auth/token/create', { body: { policies: ['default'] }, headers: root });
    const limitedToken = limited.body.auth.client_token as string;
    expect((await server.call('secrets', 'GET', '/v1/sys/metrics', { headers: { 'x-vault-token': limitedToken } })).status).toBe(403);
    const policy = await server.call('secrets', 'PUT', '/v1/sys/policies/acl/metrics', { body: { policy: 'path "sys/metrics" { capabilities = ["read"] }' }, headers: root });
    expect(policy.status).toBe(204);
    const reader = await server.call('secrets', 'POST', '/v1/auth/token/create', { body: { policies: ['metrics'] }, headers: root });
    expect((await server.call('secrets', 'GET', '/v1/sys/metrics', { headers: { 'x-vault-token': reader.body.auth.client_token } })).status).toBe(200);

    // Catalog: agent:read.
    const denyAgent = await server.call('catalog', 'PUT', '/v1/acl/policy', { body: { Name: 'no-agent', Rules: 'agent_prefix "" { policy = "deny" }' }, headers: root });
    expect(denyAgent.status).toBe(200);
    const token = await server.call('catalog', 'PUT', '/v1/acl/token', { body: { Policies: [{ Name: 'no-agent' }] }, headers: root });
    const denied = await server.call('catalog', 'GET', '/v1/agent/metrics', { headers: { 'x-consul-token': token.body.SecretID } });
    expect(denied.status).toBe(403);
    expect(denied.text).toMatch(/lacks permission 'agent:read'/);

    // Registry: the root token.
    expect((await server.call('registry', 'GET', '/metrics')).status).toBe(401);
    const user = await userWithToken(server, 'metrics-user');
    expect((await server.call('registry', 'GET', '/metrics', { headers: { authorization: `Bearer ${user}` } })).status).toBe(403);
  });
});
