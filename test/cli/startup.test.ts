import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { packedRange } from '../../src/cli/packed';
import { missingNodeFlags, missingServerEnv, reexecCommand, SERVER_NODE_FLAGS } from '../../src/cli/runtime-flags';
import { VERSION } from '../../src/engine/version';
import { CLI, hangar, startServerProcess } from '../helpers/cli';
import { commandLine, environment, HAS_PROC, servingPid } from '../helpers/processes';
import { tempDir } from '../helpers/storage';

/**
 * The bundle is a small entry plus the packed CLI (scripts/bundle.mjs, src/cli/entry.ts):
 * --version answers from the entry; other commands unpack the CLI, from memory or, with
 * NODE_COMPILE_CACHE, from one unpacked copy kept in that directory.
 */
describe('the bundled CLI starts small', () => {
  test('the entry answers --version and `version` itself and stays far smaller than the CLI it packs', () => {
    for (const args of [['--version'], ['version']]) expect(hangar(args)).toEqual({ code: 0, stdout: `hangar ${VERSION}\n`, stderr: '' });
    const source = readFileSync(CLI, 'latin1');
    const entry = source.slice(0, packedRange(source).start);
    expect(entry.length).toBeLessThan(20_000);
    expect(statSync(CLI).size).toBeGreaterThan(100 * entry.length);
  });

  test('the packed CLI is found whatever its base64 ends with, a slash included', () => {
    for (const packed of ['QUJD', 'QUI/', 'Pz8/Pw==']) {
      const bundle = `#!/usr/bin/env node\n/* entry */ code();\n/*! license */\n/*${packed}*/\n`;
      const { start, end } = packedRange(bundle);
      expect(bundle.slice(start, end)).toBe(packed);
    }
  });

  test('with NODE_COMPILE_CACHE the CLI is unpacked there once and runs the same as from memory', () => {
    const cache = tempDir();
    const fromMemory = hangar(['--help']);
    expect(fromMemory.code).toBe(0);
    expect(fromMemory.stdout).toMatch(/Usage: hangar COMMAND/);
    expect(hangar(['--help'], { NODE_COMPILE_CACHE: cache })).toEqual(fromMemory);
    const unpacked = readdirSync(cache).filter((f) => /^hangar-cli-[0-9a-f]{16}\.cjs$/.test(f));
    expect(unpacked).toHaveLength(1);
    expect(statSync(join(cache, unpacked[0])).mode % 0o100).toBe(0);
    expect(hangar(['--help'], { NODE_COMPILE_CACHE: cache })).toEqual(fromMemory);
    expect(hangar(['frobnicate'], { NODE_COMPILE_CACHE: cache })).toMatchObject({ code: 2, stderr: expect.stringMatching(/unknown command "frobnicate"/) });
  });

  test('the packed CLI is ASCII and its module factories are methods, parsed lazily', async () => {
    const cache = tempDir();
    expect(hangar(['--help'], { NODE_COMPILE_CACHE: cache }).code).toBe(0);
    const [file] = readdirSync(cache).filter((f) => f.startsWith('hangar-cli-'));
    const cli = readFileSync(join(cache, file), 'latin1');
    // scripts/bundle-memory.mjs: one byte per character in V8, and no factory parsed at start.
    expect(cli).not.toMatch(/[^\x00-\x7f]/);
    // The build's own check (it throws on an eagerly parsed factory), run on what was shipped.
    const buildScript = '../../scripts/bundle-memory.mjs';
    const { checkLazyFactories } = (await import(buildScript)) as { checkLazyFactories(source: string): number };
    expect(checkLazyFactories(cli)).toBeGreaterThan(500);
  });
});

/** The serving process's command line. */
const servingCommandLine = (pid: number): string[] => commandLine(servingPid(pid));

/** src/cli/runtime-flags.ts: V8 reads its heap flags only at start, so `hangar server` starts with them. */
describe('hangar server runs with its V8 flags', () => {
  test('only the server command lacks what neither its command line nor NODE_OPTIONS sets', () => {
    expect(missingNodeFlags(['server', '--dev'], [])).toEqual([...SERVER_NODE_FLAGS]);
    expect(missingNodeFlags(['status'], [])).toEqual([]);
    expect(missingNodeFlags(['operator', 'backup', '--to', 'f'], [])).toEqual([...SERVER_NODE_FLAGS]);
    expect(missingNodeFlags(['server', '--help'], [])).toEqual([]);
    // The operator's own value, however spelled, wins.
    expect(missingNodeFlags(['server'], ['--max_semi_space_size=32', '--heap-growing-percent=20'])).toEqual([]);
    expect(missingNodeFlags(['server'], ['--enable-source-maps'], '--inspect --max-semi-space-size=16 --heap_growing_percent=80')).toEqual([]);
    expect(missingNodeFlags(['server'], ['--max-semi-space-size=16'])).toEqual(['--heap-growing-percent=100']);
  });

  test('a single executable, whose arguments are all the CLI\'s, runs again with the same ones', () => {
    const proc = { execPath: '/usr/bin/hangar', execArgv: [...SERVER_NODE_FLAGS], argv: ['/usr/bin/hangar', '/usr/bin/hangar', 'server', '--dev'] };
    expect(reexecCommand([], { GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' }, true, proc)).toEqual({
      file: '/usr/bin/hangar',
      args: ['/usr/bin/hangar', 'server', '--dev'],
      env: { GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' },
    });
    const node = { execPath: '/usr/bin/node', execArgv: ['--enable-source-maps'], argv: ['/usr/bin/node', '/opt/hangar.cjs', 'server'] };
    expect(reexecCommand(['--max-semi-space-size=8'], {}, false, node).args).toEqual(['/usr/bin/node', '--max-semi-space-size=8', '--enable-source-maps', '/opt/hangar.cjs', 'server']);
  });

  test('and with an arena limit for malloc, unless the operator set one', () => {
    expect(missingServerEnv(['server'], { PATH: '/bin' })).toEqual({ PATH: '/bin', GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' });
    // Other tunables are kept, the limit added after them.
    expect(missingServerEnv(['server'], { GLIBC_TUNABLES: 'glibc.malloc.tcache_count=0' })).toEqual({
      GLIBC_TUNABLES: 'glibc.malloc.tcache_count=0:glibc.malloc.arena_max=2',
    });
    expect(missingServerEnv(['server'], { GLIBC_TUNABLES: 'glibc.malloc.arena_max=8' })).toBeUndefined();
    expect(missingServerEnv(['server'], { MALLOC_ARENA_MAX: '4' })).toBeUndefined();
    expect(missingServerEnv(['status'], {})).toBeUndefined();
    expect(missingServerEnv(['server', '--help'], {})).toBeUndefined();
  });

  const onLinux = HAS_PROC ? test : test.skip;
  onLinux('a server started without them runs with them, and one given its own value keeps it', async () => {
    const started = await startServerProcess(['--dev']);
    try {
      expect(servingCommandLine(started.process.pid!)).toEqual(expect.arrayContaining([...SERVER_NODE_FLAGS, CLI, 'server']));
      expect(environment(servingPid(started.process.pid!))).toContain('GLIBC_TUNABLES=glibc.malloc.arena_max=2');
    } finally {
      await started.stop();
    }
    const own = await startServerProcess(['--dev'], { NODE_OPTIONS: '--max-semi-space-size=16' });
    try {
      const line = servingCommandLine(own.process.pid!);
      expect(line).toEqual(expect.arrayContaining([CLI, 'server']));
      expect(line.filter((arg) => arg.includes('semi-space'))).toEqual([]);
    } finally {
      await own.stop();
    }
  });
});
