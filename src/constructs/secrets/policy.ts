import { Construct } from 'constructs';
import { CustomResource } from '../custom-resource';
import { Hangar } from '../hangar';

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}$/;

export interface PolicyProps {
  /** The policy name (case-insensitive). Changing it makes a new policy. */
  readonly name: string;
  /** The policy text (HCL or JSON), e.g. `path "pki/issue/web" { capabilities = ["update"] }`. */
  readonly policy: string;
  /**
   * The Hangar connection to use.
   * @default - the stack's `Hangar` (a default one: embedded engine)
   */
  readonly hangar?: Hangar;
}

/** An ACL policy of the Hangar secrets service (`sys/policies/acl/<name>`). */
export class Policy extends Construct {
  /** The policy name, lowercased as the service stores it. */
  public readonly name: string;
  /** @internal */
  public readonly _resource: CustomResource;

  constructor(scope: Construct, id: string, props: PolicyProps) {
    super(scope, id);
    if (!NAME.test(props.name)) throw new Error(`Policy name "${props.name}" is invalid: use letters, digits, ".", "_", "-", "@" (at most 128)`);
    const name = props.name.toLowerCase();
    if (name === 'root') throw new Error('Policy name "root" is reserved: the root policy cannot be changed');
    if (props.policy.length > 256 * 1024) throw new Error(`Policy ${props.name} is ${props.policy.length} characters long; the limit is 262144`);
    this.name = name;
    this._resource = new CustomResource(this, 'Resource', {
      hangar: props.hangar ?? Hangar.of(this),
      kind: 'secrets.policy',
      key: name,
      desired: { policy: props.policy },
    });
  }
}
