import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

const ROOT = join(__dirname, '..', '..');

/**
 * The published construct library depends at run time only on its peers: the engine's libraries
 * are devDependencies, bundled into the CLI (assets/hangar.cjs), and absent from a user's app. A
 * construct that imports one (through a reconcile module, say) would fail in every installed app.
 */
test('the construct library loads nothing from node_modules but its peer dependencies', async () => {
  const peers = Object.keys((JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { peerDependencies: Record<string, string> }).peerDependencies);
  const result = await build({
    entryPoints: [join(ROOT, 'src', 'index.ts')],
    bundle: true,
    platform: 'node',
    write: false,
    metafile: true,
    logLevel: 'silent',
    external: peers.flatMap((p) => [p, `${p}/*`]),
  });
  const packages = new Set(
    Object.keys(result.metafile.inputs)
      .filter((file) => file.includes('node_modules/'))
      .map((file) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file)![1]),
  );
  expect([...packages]).toEqual([]);
});
