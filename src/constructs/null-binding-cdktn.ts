import {
  hashMapper,
  hashMapperHcl,
  stringToHclTerraform,
  stringToTerraform,
  TerraformMetaArguments,
  TerraformProvider,
  TerraformResource,
} from 'cdktf';
import { Construct } from 'constructs';

/**
 * The null provider binding of the CDK Terrain build (hangar-cdktn): hashicorp/null's `null_resource`
 * and its provider, written on the core's own classes, because CDK Terrain publishes no null provider
 * binding on npm. scripts/cdktn-sources.mjs puts this module in place of ./null-binding (which
 * re-exports @cdktf/provider-null for hangar-cdktf); both export the same names, and this one
 * synthesizes exactly the blocks @cdktf/provider-null 11 (from hashicorp/null 3.2.4) writes.
 */
const GENERATOR_METADATA = { providerName: 'null', providerVersion: '3.2.4', providerVersionConstraint: '~> 3.0' };

export interface NullResourceConfig extends TerraformMetaArguments {
  /** Values whose change replaces the resource (and runs its provisioners again). */
  readonly triggers?: Record<string, string>;
}

/** A `null_resource`: an id, a `triggers` map, and whatever provisioners it is given. */
export class NullResource extends TerraformResource {
  private readonly triggers?: Record<string, string>;

  constructor(scope: Construct, id: string, config: NullResourceConfig = {}) {
    const { triggers: _triggers, ...meta } = config;
    super(scope, id, { ...meta, terraformResourceType: 'null_resource', terraformGeneratorMetadata: GENERATOR_METADATA });
    this.triggers = config.triggers;
  }

  /** The id Terraform gives the resource at create time (a token). */
  public get id(): string {
    return this.getStringAttribute('id');
  }

  protected synthesizeAttributes(): { [name: string]: any } {
    return { triggers: hashMapper(stringToTerraform)(this.triggers) };
  }

  protected synthesizeHclAttributes(): { [name: string]: any } {
    if (this.triggers === undefined) return {};
    const value = hashMapperHcl(stringToHclTerraform)(this.triggers);
    return { triggers: { value, isBlock: false, type: 'map', storageClassType: 'stringMap' } };
  }
}

/** The `null` provider block (source `hashicorp/null`, `~> 3.0`). */
export class NullProvider extends TerraformProvider {
  constructor(scope: Construct, id: string) {
    super(scope, id, { terraformResourceType: 'null', terraformGeneratorMetadata: GENERATOR_METADATA, terraformProviderSource: 'null' });
  }

  protected synthesizeAttributes(): { [name: string]: any } {
    return {};
  }

  protected synthesizeHclAttributes(): { [name: string]: any } {
    return {};
  }
}
