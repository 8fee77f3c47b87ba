import { Construct } from 'constructs';
import { CustomResource } from './custom-resource';
import { Hangar } from './hangar';

const OWNER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$/;
const BOX_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

export interface BoxProps {
  /** The user or organization that owns the box; it must exist in the registry. */
  readonly owner: string;
  /** The box name: letters, digits, `.`, `-` and `_`. Changing it makes a new box. */
  readonly name: string;
  /**
   * One-line description shown in search results.
   * @default ""
   */
  readonly shortDescription?: string;
  /**
   * Long description in Markdown.
   * @default ""
   */
  readonly description?: string;
  /**
   * Whether only the owner (and its organization's members) may see the box.
   * @default true
   */
  readonly private?: boolean;
  /**
   * The Hangar connection to use.
   * @default - the stack's `Hangar` (a default one: embedded engine)
   */
  readonly hangar?: Hangar;
}

/** A box in the Hangar box registry. */
export class Box extends Construct {
  /** `owner/name`, the box's tag. */
  public readonly tag: string;
  public readonly owner: string;
  public readonly name: string;
  /** @internal */
  public readonly _resource: CustomResource;

  constructor(scope: Construct, id: string, props: BoxProps) {
    super(scope, id);
    if (!OWNER_NAME.test(props.owner)) {
      throw new Error(`Box owner "${props.owner}" is invalid: use up to 40 letters, digits, "-" or "_", starting with a letter or digit`);
    }
    if (!BOX_NAME.test(props.name)) {
      throw new Error(`Box name "${props.name}" is invalid: use up to 100 letters, digits, ".", "-" or "_", starting with a letter or digit`);
    }
    if (props.shortDescription !== undefined && props.shortDescription.length > 1000) {
      throw new Error(`Box shortDescription is ${props.shortDescription.length} characters long; the limit is 1000`);
    }
    this.owner = props.owner;
    this.name = props.name;
    this.tag = `${props.owner}/${props.name}`;
    this._resource = new CustomResource(this, 'Resource', {
      hangar: props.hangar ?? Hangar.of(this),
      kind: 'registry.box',
      key: this.tag,
      desired: {
        shortDescription: props.shortDescription ?? '',
        description: props.description ?? '',
        private: props.private ?? true,
      },
    });
  }
}
