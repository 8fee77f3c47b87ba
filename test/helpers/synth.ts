import { TerraformStack, Testing } from 'cdktf';

/** The parts of a synthesized stack that the construct tests read. */
export type Synth = { resource: { null_resource: Record<string, any> }; provider: Record<string, unknown> };

/** Synthesizes a stack that `build` fills in. */
export function synth(build: (stack: TerraformStack) => void): Synth {
  const stack = new TerraformStack(Testing.app(), 'test');
  build(stack);
  return JSON.parse(Testing.synth(stack));
}

/** Logical id of a construct path's null_resource: the path without "Resource" parts, joined by "_", plus a hash. */
export function idOf(s: Synth, path: string): string {
  const prefix = `${path.split('/').filter((p) => p !== 'Resource').join('_')}_`;
  const found = Object.keys(s.resource.null_resource).filter((id) => id.startsWith(prefix) && !id.slice(prefix.length).includes('_'));
  if (found.length !== 1) throw new Error(`expected one null_resource for ${path}, found ${found.join(', ') || 'none'}`);
  return found[0];
}

/** The null_resource of a construct path. */
export function byPath(s: Synth, path: string): any {
  return s.resource.null_resource[idOf(s, path)];
}
