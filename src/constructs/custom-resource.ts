import { Construct } from 'constructs';
import { Hangar } from './hangar';
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
 */
export class CustomResource extends Construct {
  public readonly identity: NullResource;
  public readonly config: NullResource;

  constructor(scope: Construct, id: string, props: CustomResourceProps) {
    super(scope, id);
    const { hangar, kind, key } = props;
    const parents = (props.dependsOn ?? []).map((d) => d.config);
    this.identity = new NullResource(this, 'Identity', {
      triggers: { kind, key, payload: encodePayload(hangar._payload(kind, key)) },
      dependsOn: parents,
      provisioners: [
        {
          type: 'local-exec',
          when: 'destroy',
          command: hangar._command('destroy'),
          environment: hangar._environment({ HANGAR_PAYLOAD: '${self.triggers.payload}' }),
        },
      ],
    });
    this.config = new NullResource(this, 'Config', {
      triggers: { identity: this.identity.id, payload: encodePayload(hangar._payload(kind, key, props.desired)) },
      provisioners: [
        {
          type: 'local-exec',
          command: hangar._command('apply'),
          environment: hangar._environment({ HANGAR_PAYLOAD: '${self.triggers.payload}' }),
        },
      ],
    });
    hangar._register(kind, key, this.config);
  }
}
