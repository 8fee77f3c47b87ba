import { Construct } from 'constructs';
import { appliedBy, dependsOnLater, Hangar } from './hangar';
import { NullResource } from './null-binding';
import { encodePayload } from '../reconcile/payload-format';

export interface CustomResourceProps {
  readonly hangar: Hangar;
  /** Resource kind understood by `hangar apply` (e.g. `registry.box`). */
  readonly kind: string;
  /** Identity of the remote object (e.g. `owner/name`); a new key means a new object. */
  readonly key: string;
  /** Desired state; never secret (secrets travel in environment variables). */
  readonly desired: Record<string, unknown>;
  /** Custom resources that must exist first (a box before its versions). */
  readonly dependsOn?: CustomResource[];
}

/**
 * The custom resource every construct uses: two null_resources.
 * - Identity (triggers: kind, key, connection): replaced only when the identity changes; its
 *   destroy provisioner deletes the remote object.
 * - Config (triggers: the identity and the desired state): replaced on every change; its create
 *   provisioner upserts, so a changed property updates the object in place.
 * In batch mode (see HangarProps.batch) only the Config, which runs nothing itself.
 */
export class CustomResource extends Construct {
  public readonly identity: NullResource;
  public readonly config: NullResource;
  /** A value that changes exactly when the object's identity does (for other resources' triggers). */
  public readonly identityRef: string;
  private readonly hangar: Hangar;
  private readonly parents: readonly CustomResource[];
  private readonly later: (() => CustomResource[])[] = [];

  constructor(scope: Construct, id: string, props: CustomResourceProps) {
    super(scope, id);
    const { hangar, kind, key } = props;
    this.hangar = hangar;
    this.parents = props.dependsOn ?? [];
    const identity = hangar._payload(kind, key);
    const desired = hangar._payload(kind, key, props.desired);
    const after = () => this.predecessors().map((r) => r.config);
    if (hangar._batch) {
      // One resource: its creation is a step of the stack's batch; deletion is the inventory's (an
      // object removed or renamed) and Hangar/Teardown's (a destroy).
      this.identityRef = encodePayload(identity);
      this.config = hangar._applyResource(this, 'Config', desired, { identity: this.identityRef }, after);
      this.identity = this.config;
    } else {
      this.identity = new NullResource(this, 'Identity', {
        triggers: { kind, key, payload: encodePayload(identity) },
        dependsOn: this.parents.map((d) => appliedBy(d.config)),
        provisioners: [
          {
            type: 'local-exec',
            when: 'destroy',
            command: hangar._command('destroy'),
            environment: hangar._environment({ HANGAR_PAYLOAD: '${self.triggers.payload}' }),
          },
        ],
      });
      this.identityRef = this.identity.id;
      this.config = hangar._applyResource(this, 'Config', desired, { identity: this.identityRef }, after);
    }
    hangar._register(kind, key, this.config);
  }

  /**
   * @internal also after the custom resources `produce` finds when the stack is synthesized (those
   * declared later, or found by name): the Identity depends on their Configs.
   */
  public _after(produce: () => CustomResource[]): void {
    if (this.later.length === 0 && !this.hangar._batch) dependsOnLater(this.identity, () => this.predecessors().map((r) => appliedBy(r.config)));
    this.later.push(produce);
  }

  private predecessors(): CustomResource[] {
    return [...this.parents, ...this.later.flatMap((produce) => produce())];
  }
}
