// The reconcilers are required inside the commands: `--help` stays fast (see server.ts).
import { CommandSpec, ParsedOptions } from '../options';
import { UsageError } from '../usage';

export const applyCommand: CommandSpec = {
  name: 'apply',
  summary: 'Creates or updates one managed object to its desired state (run by custom resources).',
  usage: 'hangar apply [--payload BASE64]',
  options: { payload: { type: 'string', env: 'HANGAR_PAYLOAD', placeholder: 'BASE64', help: 'The resource payload written by the construct' } },
};

export const destroyCommand: CommandSpec = {
  name: 'destroy',
  summary: 'Deletes one managed object; succeeds when it is already gone (run by custom resources).',
  usage: 'hangar destroy [--payload BASE64]',
  options: applyCommand.options,
};

export const pruneCommand: CommandSpec = {
  name: 'prune',
  summary: 'Deletes the objects of a previous inventory that the current one no longer holds.',
  usage: 'hangar prune [--previous BASE64] [--current BASE64]',
  options: {
    previous: { type: 'string', env: 'HANGAR_PREVIOUS', placeholder: 'BASE64', help: 'Inventory of the last deploy' },
    current: { type: 'string', env: 'HANGAR_CURRENT', placeholder: 'BASE64', help: 'Inventory of this deploy' },
  },
};

async function payloadOf(options: ParsedOptions) {
  const encoded = options.payload as string | undefined;
  if (!encoded) throw new UsageError('no payload: pass --payload or set HANGAR_PAYLOAD');
  const { decodePayload } = require('../../reconcile/payload') as typeof import('../../reconcile/payload');
  return decodePayload(encoded);
}

export async function runApply(options: ParsedOptions): Promise<number> {
  const payload = await payloadOf(options);
  const { apply } = require('../../reconcile') as typeof import('../../reconcile');
  const outcome = await apply(payload);
  process.stdout.write(`${payload.kind} ${payload.key}: ${outcome}\n`);
  return 0;
}

export async function runDestroy(options: ParsedOptions): Promise<number> {
  const payload = await payloadOf(options);
  const { destroy } = require('../../reconcile') as typeof import('../../reconcile');
  const deleted = await destroy(payload);
  process.stdout.write(`${payload.kind} ${payload.key}: ${deleted ? 'deleted' : 'already gone'}\n`);
  return 0;
}

export async function runPrune(options: ParsedOptions): Promise<number> {
  const { decodeInventory } = require('../../reconcile/payload') as typeof import('../../reconcile/payload');
  const { prune } = require('../../reconcile') as typeof import('../../reconcile');
  const previous = options.previous ? decodeInventory(options.previous as string, 'previous inventory') : [];
  const current = options.current ? decodeInventory(options.current as string, 'current inventory') : [];
  const gone = await prune(previous, current);
  for (const p of gone) process.stdout.write(`${p.kind} ${p.key}: removed from the stack, deleted\n`);
  if (gone.length === 0) process.stdout.write('nothing to prune\n');
  return 0;
}
