// The reconcilers are required inside the commands: `--help` stays fast (see server.ts).
import { CommandSpec, ParsedOptions } from '../options';
import { UsageError } from '../usage';

const payloadOption = { payload: { type: 'string', env: 'HANGAR_PAYLOAD', placeholder: 'BASE64', help: 'The resource payload written by the construct' } } as const;

export const applyCommand: CommandSpec = {
  name: 'apply',
  summary: 'Creates or updates managed objects to their desired state (run by custom resources).',
  usage: 'hangar apply [--payload BASE64 | --payloads BASE64]',
  options: {
    ...payloadOption,
    payloads: {
      type: 'string',
      env: 'HANGAR_PAYLOADS',
      placeholder: 'BASE64',
      help: 'A batch of payloads, applied in order (a stack with batch: true); continued in HANGAR_PAYLOADS_2, _3, ...',
    },
  },
};

export const destroyCommand: CommandSpec = {
  name: 'destroy',
  summary: 'Deletes one managed object; succeeds when it is already gone (run by custom resources).',
  usage: 'hangar destroy [--payload BASE64]',
  options: payloadOption,
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
  const { applyAll } = require('../../reconcile') as typeof import('../../reconcile');
  const payloads = options.payloads ? batchOf(options) : [await payloadOf(options)];
  await applyAll(payloads, (payload, outcome) => process.stdout.write(`${payload.kind} ${payload.key}: ${outcome}\n`));
  return 0;
}

/** A batch's payloads: the option's, then those of HANGAR_PAYLOADS_2, _3, ... while they are set. */
function batchOf(options: ParsedOptions) {
  if (options.payload) throw new UsageError('HANGAR_PAYLOAD and a batch (HANGAR_PAYLOADS) are both set: pass one');
  const { decodeInventory } = require('../../reconcile/payload') as typeof import('../../reconcile/payload');
  const payloads = decodeInventory(options.payloads as string, 'HANGAR_PAYLOADS');
  for (let n = 2; process.env[`HANGAR_PAYLOADS_${n}`]; n++) payloads.push(...decodeInventory(process.env[`HANGAR_PAYLOADS_${n}`]!, `HANGAR_PAYLOADS_${n}`));
  return payloads;
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
  // Without a current inventory, the whole stack is being destroyed (Hangar/Teardown).
  const why = options.current === undefined ? 'deleted with the stack' : 'removed from the stack, deleted';
  for (const p of gone) process.stdout.write(`${p.kind} ${p.key}: ${why}\n`);
  if (gone.length === 0) process.stdout.write('nothing to prune\n');
  return 0;
}
