import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { BackgroundJob, Scheduler } from './background';
import { catalogApi } from './catalog/api';
import { CATALOG_JOBS } from './catalog/jobs';
import { Clock, systemClock } from './clock';
import { ApiName, buildApi } from './http/api';
import { Logger, silentLogger } from './logger';
import { registryApi } from './registry/api';
import { REGISTRY_JOBS } from './registry/jobs';
import { ensureRootToken } from './root-token';
import { secretsApi } from './secrets/api';
import { SECRETS_JOBS } from './secrets/jobs';
import { openStorage, Storage, StorageConfig } from './storage';

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
  /** The catalog's ACL default policy: `allow` (the public service's default) or `deny`. */
  readonly catalogDefaultPolicy: 'allow' | 'deny';
  /**
   * Proves a request was injected by this process (the in-process transport on a local data
   * directory acts as administrator). Random per process and never sent over a network.
   */
  readonly localAdminSecret = randomBytes(32).toString('hex');
  /** The root token when this start created (or, in dev mode, set) it; undefined otherwise. */
  createdRootToken?: string;
  /** Dev mode (a dev root token was given): the secrets service mounts the spec's default paths. */
  readonly devMode: boolean;
  private readonly apps = new Map<ApiName, FastifyInstance>();
  /** The server's periodic jobs; each service adds its own to JOBS below. */
  readonly scheduler: Scheduler;

  private constructor(
    readonly storage: Storage,
    options: EngineOptions,
  ) {
    this.logger = options.logger ?? silentLogger();
    this.clock = options.clock ?? systemClock;
    this.dataDir = options.dataDir;
    this.devMode = options.devRootToken !== undefined;
    this.catalogDefaultPolicy = options.catalogDefaultPolicy ?? 'allow';
    this.scheduler = new Scheduler(this, JOBS);
  }

  /** The Fastify app of one API, built on first use. */
  app(name: ApiName): FastifyInstance {
    let app = this.apps.get(name);
    if (!app) {
      const definitions = { registry: registryApi, secrets: secretsApi, catalog: catalogApi } as const;
      app = buildApi(this, definitions[name] as Parameters<typeof buildApi>[1]);
      this.apps.set(name, app);
    }
    return app;
  }

  /** Stops accepting requests, lets in-flight ones and background rounds finish, then closes the database. */
  async close(): Promise<void> {
    await Promise.all([...this.apps.values()].map((app) => app.close()));
    await this.scheduler.stop();
    await this.storage.close();
  }
}
