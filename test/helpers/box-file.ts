import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A small but real box file: a tar.gz with metadata.json, a Vagrantfile and a "disk" (`vagrant box add` unpacks it). */
export function makeBoxFile(dir: string, name = 'test.box', diskBytes = 256 * 1024): { path: string; sha256: string } {
  const src = join(dir, `${name}-src`);
  mkdirSync(src, { recursive: true });
  writeFileSync(join(src, 'metadata.json'), '{"provider":"virtualbox"}');
  writeFileSync(join(src, 'Vagrantfile'), 'Vagrant.configure("2") do |config|\nend\n');
  writeFileSync(join(src, 'box-disk1.vmdk'), randomBytes(diskBytes));
  const path = join(dir, name);
  const tar = spawnSync('tar', ['czf', path, '-C', src, 'metadata.json', 'Vagrantfile', 'box-disk1.vmdk']);
  if (tar.status !== 0) throw new Error(`tar failed: ${tar.stderr}`);
  return { path, sha256: createHash('sha256').update(readFileSync(path)).digest('hex') };
}
