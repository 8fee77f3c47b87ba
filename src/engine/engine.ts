import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { FastifyInstance } from 'fastify';
import { BackgroundJob, Scheduler } from './background';
import { catalogApi } from './catalog/api';
import { CATALOG_JOBS } from './catalog/jobs';
import { Clock, systemClock } from './clock';
import { prepareDataDir } from './data-dir';
import { ApiName, buildApi } from './http/api';
import type { ListenersTls } from './http/tls';
import { Logger, silentLogger } from './logger';
import type { EngineMetrics } from './metrics';
import { PeerConfig, Peers } from './peers';
import { registryApi } from './registry/api';
import { REGISTRY_JOBS } from './registry/jobs';
import { ensureRootToken, RootTokenHash } from './root-token';
import { secretsApi } from './secrets/api';
import type { UnsealHook } from './secrets/core/barrier';
import { SECRETS_JOBS } from './secrets/jobs';
import { openStorage, Storage, StorageConfig } from './storage';
import { registerUi } from './ui/serve';

export interface EngineOptions {
  readonly storage: StorageConfig;
  /** Where the engine keeps files besides the database (root token file, box images). */
  readonly dataDir?: string;
  readonly logger?: Logger;
  readonly clock?: Clock;
  /** Dev mode: this value becomes the root token. */
  readonly devRootToken?: string;
  /**
   * Create a root token if the data has none (the server does; the local CLI, acting as
   * administrator on the data directory, need not).
   */
  readonly createRootToken?: boolean;
  /** The catalog's ACL default policy for what no rule decides (`--catalog-default-policy`). */
  readonly catalogDefaultPolicy?: 'allow' | 'deny';
  /** The secrets master key's file when it lives outside the data directory (`--secrets-key-file`). */
  readonly secretsKeyFile?: string;
  /** Supplies the secrets master key instead of the environment or a key file (the KMS seam). */
  readonly unseal?: UnsealHook;
  /** The other engines of this server, in other threads (`hangar server --workers N`). */
  readonly peers?: PeerConfig;
  /** This server as a node of the catalog: its name (`--node-name`, default the host name) and address (`--advertise-addr`). */
  readonly catalogNode?: { readonly name?: string; readonly address?: string };
  /** The listeners that serve TLS, with their certificates (http/tls.ts); the others serve plain HTTP. */
  readonly tls?: ListenersTls;
}

/** Background jobs of all services, run by `hangar server`. */
const JOBS: readonly BackgroundJob[] = [...REGISTRY_JOBS, ...SECRETS_JOBS, ...CATALOG_JOBS];

export const LOCAL_ADMIN_HEADER = 'x-hangar-local-admin';

/**
 * The engine: storage, clock, logger and the three APIs. The server listens with the APIs' apps;
 * the in-process transport injects requests into the very same apps, so both paths run one pipeline.
 */
export class Engine {
  static async open(options: EngineOptions): Promise<Engine> {
    if (options.dataDir) prepareDataDir(options.dataDir);
    const storage = await openStorage(options.storage);
    const engine = new Engine(storage, options);
    if (options.createRootToken || options.devRootToken !== undefined) {
      const root = await ensureRootToken(storage, { dataDir: options.dataDir, devRootToken: options.devRootToken });
      engine.createdRootToken = root.created ? root.token : undefined;
    }
    return engine;
  }

  readonly logger: Logger;
  readonly clock: Clock;
  readonly dataDir?: string;
  readonly secretsKeyFile?: string;
  readonly unseal?: UnsealHook;
  /** The catalog's ACL default policy: `deny`, unless dev mode or the option says `allow`. */
  readonly catalogDefaultPolicy: 'allow' | 'deny';
  /**
   * Proves a request was injected by this process (the in-process transport on a local data
   * directory acts as administrator). Random per process and never sent over a network.
   */
  readonly localAdminSecret = randomBytes(32).toString('hex');
  /** Answers whether a request's token is the root token. */
  readonly rootToken: RootTokenHash;
  /** The root token when this start created (or, in dev mode, set) it; undefined otherwise. */
  createdRootToken?: string;
  /** Dev mode (a dev root token was given): the secrets service mounts the spec's default paths. */
  readonly devMode: boolean;
  private readonly apps = new Map<ApiName, FastifyInstance>();
  /** The server's periodic jobs; each service adds its own to JOBS below. */
  readonly scheduler: Scheduler;
  /** Prometheus metrics, once `enableMetrics` ran (the server does; the in-process CLI need not pay for them). */
  metrics?: EngineMetrics;
  /** The engines of the other worker threads of this server, if it has several. */
  readonly peers?: Peers;
  /** This server's node in the catalog: the node of its agent API (catalog/servers.ts). */
  readonly catalogNode: { readonly name: string; readonly address: string };
  /** The listeners that serve TLS (their apps are https servers). */
  readonly tls: ListenersTls;

  private constructor(
    readonly storage: Storage,
    options: EngineOptions,
  ) {
    this.logger = options.logger ?? silentLogger();
    this.clock = options.clock ?? systemClock;
    this.rootToken = new RootTokenHash(this.clock);
    this.dataDir = options.dataDir;
    this.secretsKeyFile = options.secretsKeyFile;
    this.unseal = options.unseal;
    this.devMode = options.devRootToken !== undefined;
    this.catalogDefaultPolicy = options.catalogDefaultPolicy ?? (this.devMode ? 'allow' : 'deny');
    this.scheduler = new Scheduler(this, JOBS);
    this.peers = options.peers && new Peers(options.peers);
    this.tls = options.tls ?? {};
    this.catalogNode = { name: options.catalogNode?.name || hostname() || 'hangar', address: options.catalogNode?.address || '127.0.0.1' };
    // Storage timings: every transaction of every service passes here; a no-op until metrics are on.
    const tx = storage.tx.bind(storage);
    storage.tx = async (fn, txOptions) => {
      const metrics = this.metrics;
      if (!metrics) return tx(fn, txOptions);
      const start = performance.now();
      let committed = false;
      try {
        const result = await tx(fn, txOptions);
        committed = true;
        return result;
      } finally {
        metrics.observeTransaction(txOptions?.readOnly === true, committed, performance.now() - start);
      }
    };
  }

  /** Starts collecting metrics (request counts and latencies, storage, jobs, process); idempotent. */
  enableMetrics(): EngineMetrics {
    if (!this.metrics) {
      const { EngineMetrics: Metrics } = require('./metrics') as typeof import('./metrics');
      this.metrics = new Metrics(this);
    }
    return this.metrics;
  }

  /** The Fastify app of one API, built on first use. */
  app(name: ApiName): FastifyInstance {
    let app = this.apps.get(name);
    if (!app) {
      const definitions = { registry: registryApi, secrets: secretsApi, catalog: catalogApi } as const;
      app = buildApi(this, definitions[name] as Parameters<typeof buildApi>[1]);
      // The web UI of this listener: the box catalog at `/`, the consoles at `/ui/` (src/ui).
      registerUi(app, name);
      this.apps.set(name, app);
    }
    return app;
  }

  /** Stops accepting requests, lets in-flight ones and background rounds finish, then closes the database. */
  async close(): Promise<void> {
    await Promise.all([...this.apps.values()].map((app) => app.close()));
    await this.scheduler.stop();
    this.peers?.close();
    await this.storage.close();
  }
}
