/**
 * Overhead of the custom resources: every one starts a Node process running the bundled CLI.
 * Prints the CLI's cold start next to `node -e 0` measured in the same run, then the time to deploy
 * a stack of N boxes against a running server, one process per object and in one batch (the
 * `batch` prop), next to N plain null_resources with a no-op provisioner (Terraform's own cost per
 * resource). Each row also prints the CPU time (user + system,
 * every process involved) per run or per box: on a 2-core machine that, not the wall time of one
 * process, bounds a deploy whose provisioners run ten at a time.
 *
 *   npx ts-node --transpile-only bench/cli-startup.ts [--boxes 200] [--runs 20]
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { NullProvider } from '@cdktf/provider-null/lib/provider';
import { Resource } from '@cdktf/provider-null/lib/resource';
import { Box, Hangar } from '../src';
import { record } from './autocannon';
import { ownCpuMs, reapedChildrenCpuMs } from './cpu';
import { percentile, report, startDevServer, timeCommand } from './util';
import { encodePayload } from '../src/reconcile/payload-format';
import { hangar, CLI } from '../test/helpers/cli';
import { tempDir } from '../test/helpers/storage';
import { terraformEnv, TerraformWorkspace } from '../test/helpers/terraform';

/** Runs a command `runs` times (see timeCommand) and prints its wall times and its CPU time per run. */
function measure(name: string, cmd: string, args: readonly string[], runs: number, env: NodeJS.ProcessEnv = {}, baseline?: number[]): number[] {
  const before = reapedChildrenCpuMs();
  const times = timeCommand(cmd, args, runs, env);
  report(name, times, baseline);
  console.log(`${''.padEnd(44)} CPU ${((reapedChildrenCpuMs() - before) / runs).toFixed(1).padStart(6)} ms per run`);
  return times;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { boxes: { type: 'string', default: '200' }, runs: { type: 'string', default: '20' } } });
  const boxes = Number(values.boxes);
  const runs = Number(values.runs);
  const node = process.execPath;
  console.log(`node ${process.version}, ${runs} runs each, bundle ${CLI}`);

  const baseline = measure('node -e 0 (baseline)', node, ['-e', '0'], runs);
  const version = measure('hangar --version', node, [CLI, '--version'], runs, {}, baseline);
  record({
    group: 'CLI',
    name: 'hangar --version (p50)',
    figure: `${percentile(version, 50).toFixed(1)} ms`,
    baseline: `node -e 0 ${percentile(baseline, 50).toFixed(1)} ms`,
    ratio: percentile(version, 50) / percentile(baseline, 50),
    goal: '<= 1.5x node -e 0',
    met: percentile(version, 50) <= 1.5 * percentile(baseline, 50),
  });
  // What the custom resources run with: V8's compile cache, warm after the first run.
  const cache = { NODE_COMPILE_CACHE: join(tempDir(), 'v8') };
  timeCommand(node, [CLI, '--version'], 1, cache);
  measure('hangar --version, compile cache', node, [CLI, '--version'], runs, cache, baseline);

  const data = tempDir();
  hangar(['registry', 'create-user', 'bench', '--password', 'password123', '--data', data]);
  const embedded = encodePayload({ v: 1, kind: 'registry.box', key: 'bench/one', connection: { dataDir: data }, desired: {} });
  hangar(['apply'], { HANGAR_PAYLOAD: embedded });
  measure('hangar apply, embedded (unchanged box)', node, [CLI, 'apply'], runs, { HANGAR_PAYLOAD: embedded }, baseline);
  measure('hangar apply, embedded, compile cache', node, [CLI, 'apply'], runs, { HANGAR_PAYLOAD: embedded, ...cache }, baseline);

  const server = await startDevServer('bench-root');
  try {
    for (const user of ['acme', 'batch']) hangar(['registry', 'create-user', user, '--password', 'password123', '--address', server.urls.registry, '--token', 'bench-root']);
    const http = encodePayload({ v: 1, kind: 'registry.box', key: 'acme/one', connection: { endpoints: { registry: server.urls.registry } }, desired: {} });
    const env = { HANGAR_PAYLOAD: http, HANGAR_TOKEN: 'bench-root' };
    hangar(['apply'], env);
    measure('hangar apply, HTTP (unchanged box)', node, [CLI, 'apply'], runs, env, baseline);
    measure('hangar apply, HTTP, compile cache', node, [CLI, 'apply'], runs, { ...env, ...cache }, baseline);

    const tf = terraformEnv();
    if (!tf) {
      console.log('terraform/tofu not available: stack deploy skipped');
      return;
    }
    const deploy = (build: Parameters<TerraformWorkspace['synth']>[0]) => {
      const ws = new TerraformWorkspace(tf, { HANGAR_TOKEN: 'bench-root' });
      ws.synth(build);
      ws.run('init', '-input=false');
      const start = Date.now();
      const cpu = reapedChildrenCpuMs();
      const served = server.process.pid ? ownCpuMs(server.process.pid) : 0;
      ws.run('apply', '-auto-approve', '-input=false');
      const ms = Date.now() - start;
      // Terraform and every provisioner it ran (reaped by it, so counted for it), then the server's share.
      const local = reapedChildrenCpuMs() - cpu;
      const remote = server.process.pid ? ownCpuMs(server.process.pid) - served : 0;
      console.log(`  CPU per resource: terraform and provisioners ${(local / boxes).toFixed(1)} ms, server ${(remote / boxes).toFixed(1)} ms`);
      return ms;
    };
    const plain = deploy((stack) => {
      new NullProvider(stack, 'null');
      for (let i = 0; i < boxes; i++) {
        new Resource(stack, `R${i}`, { triggers: { i: String(i) }, provisioners: [{ type: 'local-exec', command: 'true' }] });
      }
    });
    console.log(`terraform apply, ${boxes} null_resources running \`true\` (baseline): ${(plain / 1000).toFixed(1)} s`);
    // Each mode on a fresh set of boxes, so that both create them.
    for (const [mode, batch] of [['one process per object', false], ['batch: true', true]] as const) {
      const owner = batch ? 'batch' : 'acme';
      const ms = deploy((stack) => {
        const h = new Hangar(stack, 'Hangar', { registryUrl: server.urls.registry, batch });
        for (let i = 0; i < boxes; i++) new Box(stack, `Box${i}`, { owner, name: `box-${i}`, hangar: h });
      });
      console.log(`terraform apply, ${boxes} Box constructs over HTTP, ${mode}: ${(ms / 1000).toFixed(1)} s ` +
        `(${((ms - plain) / boxes).toFixed(0)} ms more per box)`);
      record({
        group: 'CLI',
        name: `cdktf stack of ${boxes} Box constructs (${mode}): terraform apply`,
        figure: `${(ms / 1000).toFixed(1)} s`,
        baseline: `${boxes} null_resources ${(plain / 1000).toFixed(1)} s`,
        ratio: ms / plain,
        goal: '<= 3x',
        met: ms <= 3 * plain,
      });
    }
  } finally {
    await server.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
