// The CDK Terrain build of the construct library (package hangar-cdktn in cdktn/) comes from the same
// sources as hangar-cdktf. Run from the cdktn/ project's tasks:
//
//   node ../scripts/cdktn-sources.mjs sources   cdktn/src: every module src/index.ts reaches, with the
//                                               module specifier 'cdktf' replaced by 'cdktn' (nothing
//                                               else changes); cdktn/assets/hangar.cjs: the bundled CLI
//   node ../scripts/cdktn-sources.mjs pack [DIR]  DIR/hangar-cdktn-<version>.tgz (default dist/js), at
//                                               the version of the root package.json (the one
//                                               `npx projen release` bumps)
//
// The generated files are not committed: edit src/, never cdktn/src/.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const PROJECT = join(ROOT, 'cdktn');
const ts = createRequire(join(ROOT, 'package.json'))('typescript');

/** Modules replaced in the cdktn build: @cdktf/provider-null's binding by one written on cdktn's core. */
const BINDINGS = {
  [join(ROOT, 'src', 'constructs', 'null-binding.ts')]: join(ROOT, 'src', 'constructs', 'null-binding-cdktn.ts'),
};

/** Packages the construct library may load at run time, besides its own modules and node: builtins. */
const PEERS = new Set(['cdktf', 'constructs']);

function fail(message) {
  console.error(`cdktn-sources: ${message}`);
  process.exit(1);
}

/** The source file a relative module specifier of `from` names. */
function resolveRelative(from, specifier) {
  const base = resolve(dirname(from), specifier);
  for (const candidate of [`${base}.ts`, join(base, 'index.ts')]) if (existsSync(candidate)) return candidate;
  return fail(`${relative(ROOT, from)}: cannot resolve '${specifier}'`);
}

/** Every module the entry point reaches through relative imports, with its text rewritten for cdktn. */
function closure(entry) {
  const files = new Map();
  const pending = [entry];
  while (pending.length > 0) {
    const file = pending.pop();
    if (files.has(file)) continue;
    const text = readFileSync(file, 'utf8');
    const { importedFiles } = ts.preProcessFile(text, true, true);
    let rewritten = '';
    let at = 0;
    for (const { fileName, pos } of [...importedFiles].sort((a, b) => a.pos - b.pos)) {
      if (fileName.startsWith('.')) {
        const target = resolveRelative(file, fileName);
        if (target in BINDINGS) {
          // the null provider binding: CDK Terrain's own in place of @cdktf/provider-null's
          const start = text.indexOf(fileName, pos);
          const replaced = fileName.replace(/null-binding$/, basename(BINDINGS[target], '.ts'));
          rewritten += text.slice(at, start) + replaced;
          at = start + fileName.length;
          pending.push(BINDINGS[target]);
        } else {
          pending.push(target);
        }
      } else if (fileName === 'cdktf' || fileName.startsWith('cdktf/')) {
        // pos is where the string literal starts (its quote, in the versions seen)
        const start = text.indexOf(fileName, pos);
        rewritten += text.slice(at, start) + fileName.replace(/^cdktf/, 'cdktn');
        at = start + fileName.length;
      } else if (!fileName.startsWith('node:') && !PEERS.has(fileName)) {
        fail(`${relative(ROOT, file)} imports '${fileName}', which is no peer of the construct library`);
      }
    }
    files.set(file, rewritten + text.slice(at));
  }
  return files;
}

function sources() {
  const src = join(ROOT, 'src');
  const out = join(PROJECT, 'src');
  rmSync(out, { recursive: true, force: true });
  for (const [file, text] of closure(join(src, 'index.ts'))) {
    const target = join(out, relative(src, file));
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, `// Generated from src/${relative(src, file)} by scripts/cdktn-sources.mjs: edit the original.\n${text}`);
  }
  // the bundled CLI and what it ships with, as in hangar-cdktf
  if (!existsSync(join(ROOT, 'assets', 'hangar.cjs'))) fail('assets/hangar.cjs is missing: run `npx projen bundle` in the root first');
  rmSync(join(PROJECT, 'assets'), { recursive: true, force: true });
  cpSync(join(ROOT, 'assets'), join(PROJECT, 'assets'), { recursive: true });
}

function pack() {
  const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version;
  const manifest = JSON.parse(readFileSync(join(PROJECT, 'package.json'), 'utf8'));
  const stage = mkdtempSync(join(tmpdir(), 'hangar-cdktn-pack-'));
  try {
    for (const entry of ['lib', 'assets', 'README.md', 'LICENSE', '.npmignore']) {
      if (existsSync(join(PROJECT, entry))) cpSync(join(PROJECT, entry), join(stage, entry), { recursive: true });
    }
    writeFileSync(join(stage, 'package.json'), `${JSON.stringify({ ...manifest, version, scripts: undefined }, null, 2)}\n`);
    const dist = resolve(process.argv[3] ?? join(ROOT, 'dist', 'js'));
    mkdirSync(dist, { recursive: true });
    execFileSync('npm', ['pack', '--pack-destination', dist], { cwd: stage, stdio: 'inherit' });
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

const commands = { sources, pack };
const command = commands[process.argv[2]];
if (!command) fail(`usage: node scripts/cdktn-sources.mjs ${Object.keys(commands).join('|')}`);
command();
