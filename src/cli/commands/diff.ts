import { CommandSpec, ParsedOptions } from '../options';

export const diffCommand: CommandSpec = {
  name: 'diff',
  summary: 'Compares the desired state of a synthesized stack with the live services (exit 0 in sync, 2 drift, 1 error).',
  usage: 'hangar diff DIR [--fix]',
  positionals: ['dir'],
  options: {
    fix: { type: 'boolean', help: 'Bring drifted and missing objects back to the desired state, then report' },
  },
};

const show = (value: unknown) => JSON.stringify(value ?? null);

/** Exit code 0 when everything is in sync (or was fixed), 2 on drift, 1 on error. */
export async function runDiff(options: ParsedOptions, [dir]: string[]): Promise<number> {
  // Required here so that other commands do not load the reconcilers (see server.ts).
  const { desiredStateIn, detectDrift } = require('../../reconcile/drift') as typeof import('../../reconcile/drift');
  const { apply } = require('../../reconcile') as typeof import('../../reconcile');
  const reports = await detectDrift(desiredStateIn(dir));
  let drift = 0;
  for (const { payload, status, fields } of reports) {
    const name = `${payload.kind} ${payload.key}`;
    if (status === 'in sync') {
      process.stdout.write(`  ${name}: in sync\n`);
      continue;
    }
    const detail = status === 'missing' ? 'missing' : fields.map((f) => `${f.field}: live ${show(f.live)}, desired ${show(f.desired)}`).join('; ');
    if (options.fix) {
      await apply(payload);
      process.stdout.write(`~ ${name}: ${detail} (fixed)\n`);
    } else {
      process.stdout.write(`~ ${name}: ${detail}\n`);
      drift++;
    }
  }
  process.stdout.write(
    drift ? `${drift} of ${reports.length} objects drifted\n` : `${reports.length} objects ${options.fix ? 'in sync now' : 'in sync'}\n`,
  );
  return drift ? 2 : 0;
}
