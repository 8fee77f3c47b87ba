import * as path from 'node:path';
import { AssetType, Lazy, TerraformAsset, TerraformProvider, TerraformStack, Token } from 'cdktf';
import { Construct } from 'constructs';
import { NullProvider, NullResource } from './null-binding';
import { ConnectionSpec, encodePayload, PAYLOAD_VERSION, ResourcePayload } from '../reconcile/payload-format';

/** Connection of a stack's Hangar resources: a running server, or the embedded engine on a data directory. */
export interface HangarProps {
  /**
   * URL of the registry API of a running server, e.g. `http://127.0.0.1:8080`.
   * @default - no server: the custom resources run the bundled engine on `dataDir`
   */
  readonly registryUrl?: string;
  /**
   * URL of the secrets API of a running server, e.g. `http://127.0.0.1:8200`.
   * @default - no server
   */
  readonly secretsUrl?: string;
  /**
   * URL of the catalog API of a running server, e.g. `http://127.0.0.1:8500`.
   * @default - no server
   */
  readonly catalogUrl?: string;
  /**
   * Data directory of the embedded mode (resolved to an absolute path at synth time).
   * Ignored when a server URL is set.
   * @default - `HANGAR_DATA` at deploy time, else `~/.local/share/hangar` (where `hangar server` looks too)
   */
  readonly dataDir?: string;
  /**
   * Name of the environment variable that holds the token at deploy time. The token itself never
   * enters the configuration or the state.
   * @default "HANGAR_TOKEN"
   */
  readonly tokenEnvVar?: string;
  /**
   * Command that runs the bundled CLI; it needs Node.js >= 22.12.
   * @default - `$HANGAR_NODE` at deploy time, else `node`
   */
  readonly nodeCommand?: string;
  /**
   * Apply the stack's objects in one process per deploy instead of one per object. Each object is
   * one null_resource (its Config, whose triggers show in the plan what changes) that runs nothing;
   * `Hangar/Apply`, replaced whenever any of them is, runs `hangar apply` on every object of the
   * stack, parents before children; a destroy of the stack deletes them all in one process
   * (`Hangar/Teardown`). A deploy of 200 boxes takes about a sixth of the time (docs/constructs.md).
   *
   * The price: when any object changes, every object is applied again. Each apply compares before it
   * writes, so an unchanged object is only read, except those holding a secret that cannot be read
   * back (a JWT configuration with keys, a RabbitMQ or transform store connection), which are written
   * again with the same values; so every environment variable the stack names must be set on every
   * deploy. The first object that fails stops the batch: those before it are applied, and the next
   * deploy applies them all again.
   * @default false
   */
  readonly batch?: boolean;
}

/**
 * The most characters of one environment variable of the batch's provisioner: Linux refuses to start
 * a process with a single variable over 128 KiB (E2BIG), so a long list is split over several.
 */
const BATCH_CHUNK = 96 * 1024;

/** One object's upsert in a batch: the resource whose creation stands for it, and what it must follow. */
interface ApplyStep {
  readonly resource: NullResource;
  readonly payload: ResourcePayload;
  readonly after: () => NullResource[];
}

const URL_PATTERN = /^https?:\/\/[^\s/]+(\/.*)?$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The connection and bookkeeping shared by every Hangar resource of a stack: where the services are,
 * the bundled CLI (copied into cdktf.out), and the inventory that deletes resources removed from
 * the stack. Declare one per stack to configure it; resources create a default one otherwise.
 */
export class Hangar extends Construct {
  /** The Hangar of the stack that holds `scope`: the one declared there, or a default one. */
  public static of(scope: Construct): Hangar {
    const stack = TerraformStack.of(scope);
    const found = stack.node.children.find((c): c is Hangar => c instanceof Hangar);
    return found ?? new Hangar(stack, 'Hangar');
  }

  /** True when the resources talk to a running server over HTTP. */
  public readonly usesServer: boolean;
  /** @internal whether the stack's objects are applied in one batch (HangarProps.batch) */
  public readonly _batch: boolean;
  private readonly connection: ConnectionSpec;
  private readonly nodeCommand: string;
  private readonly cli: TerraformAsset;
  private readonly entries: ResourcePayload[] = [];
  /** The entries, encoded when the stack is synthesized. */
  private readonly declared = Lazy.stringValue({ produce: () => encodePayload(this.entries) });
  private readonly managed: NullResource[] = [];
  private readonly steps: ApplyStep[] = [];
  private batchResource?: NullResource;

  constructor(scope: Construct, id: string, props: HangarProps = {}) {
    super(scope, id);
    for (const [name, value] of Object.entries({ registryUrl: props.registryUrl, secretsUrl: props.secretsUrl, catalogUrl: props.catalogUrl })) {
      if (value !== undefined && !URL_PATTERN.test(value)) {
        throw new Error(`Hangar ${name} "${value}" is not an http(s) URL; use e.g. "http://127.0.0.1:8080"`);
      }
    }
    if (props.tokenEnvVar !== undefined && !ENV_NAME.test(props.tokenEnvVar)) {
      throw new Error(`Hangar tokenEnvVar "${props.tokenEnvVar}" is not an environment variable name; use e.g. "HANGAR_TOKEN"`);
    }
    const endpoints = props.registryUrl || props.secretsUrl || props.catalogUrl
      ? { registry: props.registryUrl, secrets: props.secretsUrl, catalog: props.catalogUrl }
      : undefined;
    this.usesServer = endpoints !== undefined;
    this.connection = {
      endpoints: endpoints && JSON.parse(JSON.stringify(endpoints)),
      dataDir: endpoints || props.dataDir === undefined ? undefined : path.resolve(props.dataDir),
      tokenEnv: props.tokenEnvVar,
    };
    this.nodeCommand = props.nodeCommand ?? '$${HANGAR_NODE:-node}';
    this._batch = props.batch ?? false;
    // The custom resources are null_resources: the stack needs the null provider once.
    // (unless the stack declares it already: another Hangar construct, or the user's own binding).
    const stack = TerraformStack.of(this);
    const declared = stack.node.findAll().some((c) => c instanceof TerraformProvider && c.terraformResourceType === 'null');
    if (!declared) new NullProvider(this, 'NullProvider');
    // A fixed asset hash keeps the CLI's path stable across library versions, so the provisioner
    // commands of existing resources still find it after an upgrade.
    this.cli = new TerraformAsset(this, 'Cli', {
      path: path.join(__dirname, '..', '..', 'assets', 'hangar.cjs'),
      type: AssetType.FILE,
      assetHash: 'hangar-cli',
    });
    // From the start, even with no object yet: a stack whose last object is removed must still have
    // an inventory, whose replacement deletes what the stack held.
    this.createInventory();
  }

  /** @internal the shell command that runs a CLI subcommand */
  public _command(subcommand: string): string {
    return `${this.nodeCommand} "$HANGAR_CLI" ${subcommand}`;
  }

  /**
   * @internal the environment of a provisioner: where the CLI is, plus `extra`. V8's compile cache
   * (in the stack's working directory) saves most of the CLI's start-up on every run after the first.
   */
  public _environment(extra: Record<string, string>): Record<string, string> {
    return { HANGAR_CLI: this.cli.path, NODE_COMPILE_CACHE: '.hangar/node-compile-cache', ...extra };
  }

  /** @internal */
  public _payload(kind: string, key: string, desired?: Record<string, unknown>): ResourcePayload {
    return { v: PAYLOAD_VERSION, kind, key, connection: this.connection, ...(desired ? { desired } : {}) };
  }

  /**
   * @internal a null_resource whose creation applies `payload` (its triggers are `triggers` and the
   * encoded payload): with its own provisioner, or in batch mode as a step of `Hangar/Apply`, after the
   * steps of the resources `after` returns.
   */
  public _applyResource(
    scope: Construct,
    id: string,
    payload: ResourcePayload,
    triggers: Record<string, string>,
    after: () => NullResource[],
  ): NullResource {
    const resource = new NullResource(scope, id, {
      triggers: { ...triggers, payload: encodePayload(payload) },
      provisioners: this._batch
        ? undefined
        : [
          {
            type: 'local-exec',
            command: this._command('apply'),
            environment: this._environment({ HANGAR_PAYLOAD: '${self.triggers.payload}' }),
          },
        ],
    });
    if (this._batch) {
      this.steps.push({ resource, payload, after });
      this.batchResource ??= this.createBatch();
      applyingBatch.set(resource, this.batchResource);
    }
    return resource;
  }

  /** @internal records a managed object; the inventory runs after all of them */
  public _register(kind: string, key: string, dependable: NullResource): void {
    this.entries.push(this._payload(kind, key));
    this.managed.push(dependable);
  }


  private createBatch(): NullResource {
    // Destroyed only by a destroy of the stack (no trigger ever replaces it): deletes every object
    // the stack declares, children first. Those removed from it before are the inventory's.
    new NullResource(this, 'Teardown', {
      provisioners: [
        {
          type: 'local-exec',
          when: 'destroy',
          command: this._command('prune'),
          environment: this._environment({ HANGAR_PREVIOUS: this.declared }),
        },
      ],
    });
    const apply = new NullResource(this, 'Apply', {
      // A step's resource gets a new id whenever it is replaced (its object changed, or a release
      // re-runs for a replaced provider) or added; an object removed from the stack is the inventory's.
      triggers: { steps: Lazy.stringValue({ produce: () => this.steps.map((s) => s.resource.id).join(',') }) },
      provisioners: [
        {
          type: 'local-exec',
          command: this._command('apply'),
          environment: Token.asStringMap(Lazy.anyValue({ produce: () => this._environment(batchEnvironment(orderSteps(this.steps))) })),
        },
      ],
    });
    // Objects of another Hangar construct of the stack that these follow (a rare mix): after them.
    dependsOnLater(apply, () => [...new Set(this.steps.flatMap((s) => s.after()).map(appliedBy))].filter((r) => r !== apply));
    return apply;
  }

  private createInventory(): void {
    const current = this.declared;
    // When the list changes Terraform replaces this resource; the destroy provisioner of the old
    // instance sees the old list (self.triggers) and the new one (this configuration) and deletes
    // what was removed from the stack, for which Terraform itself runs no provisioner.
    const inventory = new NullResource(this, 'Inventory', {
      triggers: { inventory: current },
      provisioners: [
        {
          type: 'local-exec',
          when: 'destroy',
          command: this._command('prune'),
          environment: this._environment({ HANGAR_PREVIOUS: '${self.triggers.inventory}', HANGAR_CURRENT: current }),
        },
      ],
    });
    dependsOnLater(inventory, () => [...this.managed, ...(this.batchResource ? [this.batchResource] : [])]);
  }
}

/** The Hangar/Apply resource of each step of a batch. */
const applyingBatch = new WeakMap<NullResource, NullResource>();

/**
 * The resource whose creation applies the object `resource` stands for: itself when it has its own
 * provisioner, else its batch's Hangar/Apply.
 */
export function appliedBy(resource: NullResource): NullResource {
  return applyingBatch.get(resource) ?? resource;
}

/**
 * Makes `resource` depend on what `produce` returns when the stack is synthesized: the list may grow
 * after the resource is declared. depends_on wants bare addresses.
 */
export function dependsOnLater(resource: NullResource, produce: () => NullResource[]): void {
  resource.addOverride('depends_on', Lazy.listValue({ produce: () => produce().map((r) => `${r.terraformResourceType}.${r.friendlyUniqueId}`) }));
}

/** The steps with each one after those it follows (depth first, otherwise in the order declared). */
function orderSteps(steps: readonly ApplyStep[]): ResourcePayload[] {
  const byResource = new Map(steps.map((s) => [s.resource, s]));
  const state = new Map<ApplyStep, 'visiting' | 'done'>();
  const ordered: ResourcePayload[] = [];
  const visit = (step: ApplyStep) => {
    if (state.get(step) === 'done') return;
    if (state.get(step) === 'visiting') throw new Error(`Hangar: ${step.resource.node.path} depends on itself through the objects it follows`);
    state.set(step, 'visiting');
    for (const before of step.after()) {
      const found = byResource.get(before);
      if (found) visit(found);
    }
    state.set(step, 'done');
    ordered.push(step.payload);
  };
  steps.forEach(visit);
  return ordered;
}

/** The batch's payloads as environment variables of at most BATCH_CHUNK characters: HANGAR_PAYLOADS, then HANGAR_PAYLOADS_2, ... */
function batchEnvironment(payloads: readonly ResourcePayload[]): Record<string, string> {
  const chunks: ResourcePayload[][] = [[]];
  let size = 0;
  for (const payload of payloads) {
    // base64url: 4 characters per 3 bytes of JSON, plus a comma.
    const cost = Math.ceil(((Buffer.byteLength(JSON.stringify(payload)) + 1) * 4) / 3);
    if (size + cost > BATCH_CHUNK && chunks[chunks.length - 1].length > 0) {
      chunks.push([]);
      size = 0;
    }
    chunks[chunks.length - 1].push(payload);
    size += cost;
  }
  return Object.fromEntries(chunks.map((chunk, i) => [i === 0 ? 'HANGAR_PAYLOADS' : `HANGAR_PAYLOADS_${i + 1}`, encodePayload(chunk)]));
}
