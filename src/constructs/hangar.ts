import * as path from 'node:path';
import { AssetType, Lazy, TerraformAsset, TerraformProvider, TerraformStack } from 'cdktf';
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
  private readonly connection: ConnectionSpec;
  private readonly nodeCommand: string;
  private readonly cli: TerraformAsset;
  private readonly entries: ResourcePayload[] = [];
  private readonly managed: NullResource[] = [];
  private inventory?: NullResource;

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

  /** @internal records a managed object; the inventory runs after all of them */
  public _register(kind: string, key: string, dependable: NullResource): void {
    this.entries.push(this._payload(kind, key));
    this.managed.push(dependable);
    this.inventory ??= this.createInventory();
  }


  private createInventory(): NullResource {
    const current = Lazy.stringValue({ produce: () => encodePayload(this.entries) });
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
    // depends_on wants bare addresses; the list grows as resources register, so it is lazy.
    inventory.addOverride(
      'depends_on',
      Lazy.listValue({ produce: () => this.managed.map((r) => `${r.terraformResourceType}.${r.friendlyUniqueId}`) }),
    );
    return inventory;
  }
}
