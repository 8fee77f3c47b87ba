import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { App, TerraformStack, Testing } from 'cdktf';
import { Box, BoxArchitecture, BoxChecksumType, BoxProvider, BoxVersion, Hangar } from '../../src';
import { desiredStateIn } from '../../src/reconcile/drift';
import { decodeInventory, decodePayload } from '../../src/reconcile/payload';
import { tempDir } from '../helpers/storage';
import { byPath, Synth, synth } from '../helpers/synth';


describe('Box construct', () => {
  test('renders an identity and a config null_resource with provisioners running the bundled CLI', () => {
    const s = synth((stack) => new Box(stack, 'Web', { owner: 'acme', name: 'web', shortDescription: 'Web server' }));
    expect(Object.keys(s.provider)).toEqual(['null']);
    const identity = byPath(s, 'Web/Resource/Identity');
    const config = byPath(s, 'Web/Resource/Config');
    expect(identity.triggers).toMatchObject({ kind: 'registry.box', key: 'acme/web' });
    expect(decodePayload(identity.triggers.payload)).toEqual({ v: 1, kind: 'registry.box', key: 'acme/web', connection: {} });
    expect(identity.provisioner[0]['local-exec']).toMatchObject({
      when: 'destroy',
      command: '$${HANGAR_NODE:-node} "$HANGAR_CLI" destroy',
      environment: { HANGAR_PAYLOAD: '${self.triggers.payload}' },
    });
    expect(config.triggers.identity).toMatch(/^\$\{null_resource\..*Identity.*\.id\}$/);
    expect(decodePayload(config.triggers.payload).desired).toEqual({ shortDescription: 'Web server', description: '', private: true });
    expect(config.provisioner[0]['local-exec'].command).toBe('$${HANGAR_NODE:-node} "$HANGAR_CLI" apply');
    expect(config.provisioner[0]['local-exec'].environment.HANGAR_CLI).toMatch(/^assets\/.*\/hangar-cli\/hangar\.cjs$/);
  });

  test('the inventory lists every managed object and runs after them', () => {
    const s = synth((stack) => {
      new Box(stack, 'A', { owner: 'acme', name: 'a' });
      new Box(stack, 'B', { owner: 'acme', name: 'b' });
    });
    const inventory = byPath(s, 'Hangar/Inventory');
    expect(decodeInventory(inventory.triggers.inventory).map((p) => p.key)).toEqual(['acme/a', 'acme/b']);
    expect(inventory.depends_on).toHaveLength(2);
    const exec = inventory.provisioner[0]['local-exec'];
    expect(exec).toMatchObject({ when: 'destroy', environment: { HANGAR_PREVIOUS: '${self.triggers.inventory}' } });
    expect(exec.environment.HANGAR_CURRENT).toBe(inventory.triggers.inventory);
  });

  test('a declared Hangar has an inventory before any object, so that removing the last one deletes it', () => {
    const s = synth((stack) => new Hangar(stack, 'Hangar', { dataDir: '/srv/hangar' }));
    expect(decodeInventory(byPath(s, 'Hangar/Inventory').triggers.inventory)).toEqual([]);
  });

  test('a payload over 32 KiB of JSON is deflated, so that a large stack\'s inventory fits in one environment variable', () => {
    const big = synth((stack) => {
      for (let i = 0; i < 1000; i++) new Box(stack, `B${i}`, { owner: 'acme', name: `box-${i}` });
    });
    const inventory = byPath(big, 'Hangar/Inventory').triggers.inventory as string;
    // Linux refuses a variable over 128 KiB; plain base64url was about 110 KB here.
    expect(inventory).toMatch(/^z\./);
    expect(inventory.length).toBeLessThan(16 * 1024);
    expect(decodeInventory(inventory).map((p) => p.key)).toEqual(Array.from({ length: 1000 }, (_, i) => `acme/box-${i}`));
    // Small payloads stay plain base64url: the triggers of existing stacks do not change.
    const small = byPath(synth((stack) => new Box(stack, 'A', { owner: 'acme', name: 'a' })), 'Hangar/Inventory').triggers.inventory as string;
    expect(JSON.parse(Buffer.from(small, 'base64url').toString('utf8'))).toHaveLength(1);
    // Damaged or oversized deflated payloads are refused with the usual message.
    expect(() => decodeInventory('z.AAAA')).toThrow(/inventory is not base64url-encoded JSON/);
    // 65 MiB of valid JSON (an empty list padded with spaces): over the 64 MiB a payload may inflate to.
    const padded = Buffer.concat([Buffer.from('['), Buffer.alloc(65 * 1024 * 1024, 0x20), Buffer.from(']')]);
    const bomb = `z.${deflateRawSync(padded).toString('base64url')}`;
    expect(() => decodeInventory(bomb)).toThrow(/inventory is not base64url-encoded JSON/);
  });

  test('a description with ${...} is not read as a Terraform interpolation', () => {
    const s = synth((stack) => new Box(stack, 'Web', { owner: 'acme', name: 'web', description: 'costs ${var.money} and %{ if x }' }));
    const raw = JSON.stringify(s);
    expect(raw).not.toContain('var.money');
    expect(decodePayload(byPath(s, 'Web/Resource/Config').triggers.payload).desired).toMatchObject({ description: 'costs ${var.money} and %{ if x }' });
  });

  test('HTTP mode: endpoints and the token variable name in the payload, never the token', () => {
    process.env.HANGAR_TOKEN = 'super-secret-token-value';
    try {
      const s = synth((stack) => {
        const hangar = new Hangar(stack, 'Hangar', { registryUrl: 'http://127.0.0.1:8080', tokenEnvVar: 'CI_HANGAR_TOKEN' });
        new Box(stack, 'Web', { owner: 'acme', name: 'web', hangar });
      });
      expect(JSON.stringify(s)).not.toContain('super-secret-token-value');
      expect(decodePayload(byPath(s, 'Web/Resource/Config').triggers.payload).connection).toEqual({
        endpoints: { registry: 'http://127.0.0.1:8080' },
        tokenEnv: 'CI_HANGAR_TOKEN',
      });
    } finally {
      delete process.env.HANGAR_TOKEN;
    }
  });

  test('embedded mode with a data directory resolves it to an absolute path', () => {
    const s = synth((stack) => {
      new Hangar(stack, 'Hangar', { dataDir: 'relative/data' });
      new Box(stack, 'Web', { owner: 'acme', name: 'web' });
    });
    expect(decodePayload(byPath(s, 'Web/Resource/Identity').triggers.payload).connection.dataDir).toBe(join(process.cwd(), 'relative/data'));
  });

  test('one null provider per stack, even with several Hangar connections', () => {
    const s = synth((stack) => {
      new Hangar(stack, 'Hangar', {});
      new Hangar(stack, 'Other', { registryUrl: 'http://127.0.0.1:9999' });
      new Box(stack, 'Web', { owner: 'acme', name: 'web' });
    });
    expect((s.provider.null as unknown[]).length).toBe(1);
  });

  test('invalid properties fail at construction with the bad value and the fix', () => {
    const stack = () => new TerraformStack(Testing.app(), 'x');
    expect(() => new Box(stack(), 'B', { owner: 'acme', name: '../etc' })).toThrow(/Box name "..\/etc" is invalid: use up to 100 letters/);
    expect(() => new Box(stack(), 'B', { owner: 'a b', name: 'x' })).toThrow(/Box owner "a b" is invalid/);
    expect(() => new Box(stack(), 'B', { owner: 'acme', name: 'x', shortDescription: 'y'.repeat(1001) })).toThrow(/1001 characters long; the limit is 1000/);
    expect(() => new Hangar(stack(), 'H', { registryUrl: 'localhost:8080' })).toThrow(/registryUrl "localhost:8080" is not an http\(s\) URL/);
    expect(() => new Hangar(stack(), 'H', { tokenEnvVar: 'not a name' })).toThrow(/tokenEnvVar "not a name" is not an environment variable name/);
  });

  test('the bundled CLI is copied into cdktf.out', () => {
    const app = new App({ outdir: tempDir() });
    const stack = new TerraformStack(app, 'assets');
    new Box(stack, 'Web', { owner: 'acme', name: 'web' });
    app.synth();
    const stackDir = join(app.outdir, 'stacks', 'assets');
    const json = JSON.parse(readFileSync(join(stackDir, 'cdk.tf.json'), 'utf8'));
    const cli = byPath(json, 'Web/Resource/Config').provisioner[0]['local-exec'].environment.HANGAR_CLI;
    expect(existsSync(join(stackDir, cli))).toBe(true);
    expect(readFileSync(join(stackDir, cli), 'utf8').startsWith('#!/usr/bin/env node')).toBe(true);
  });
});

describe('BoxVersion and BoxProvider constructs', () => {
  const boxFile = (content: string) => {
    const file = join(tempDir(), 'web.box');
    writeFileSync(file, content);
    return file;
  };
  const idOf = (s: Synth, path: string) => {
    const prefix = `${path.split('/').filter((p) => p !== 'Resource').join('_')}_`;
    return Object.keys(s.resource.null_resource).find((id) => id.startsWith(prefix) && !id.slice(prefix.length).includes('_'))!;
  };

  function stackWith(file: string, released = true) {
    return synth((stack) => {
      const box = new Box(stack, 'Web', { owner: 'acme', name: 'web' });
      const version = new BoxVersion(stack, 'V1', { box, version: '1.0.0', description: 'First', released });
      new BoxProvider(stack, 'Vbox', { version, name: 'virtualbox', file });
      new BoxProvider(stack, 'Libvirt', {
        version,
        name: 'libvirt',
        url: 'https://example.com/web.box',
        checksum: 'AB'.repeat(16),
        checksumType: BoxChecksumType.MD5,
      });
    });
  }

  test('a provider with a local file carries its absolute path and the checksum computed at synth time, never the content', () => {
    const file = boxFile('box file content that must not appear');
    const s = stackWith(file);
    const provider = byPath(s, 'Vbox/Resource/Config');
    expect(decodePayload(provider.triggers.payload)).toMatchObject({
      kind: 'registry.box-provider',
      key: 'acme/web/1.0.0/virtualbox',
      desired: { file, checksum: createHash('sha256').update('box file content that must not appear').digest('hex'), checksumType: 'sha256' },
    });
    expect(JSON.stringify(s)).not.toContain('must not appear');
    expect(decodePayload(byPath(s, 'Libvirt/Resource/Config').triggers.payload).desired).toEqual({
      url: 'https://example.com/web.box',
      checksum: 'ab'.repeat(16),
      checksumType: 'md5',
    });
  });

  test('a changed file changes only the provider config (re-upload), not its identity nor the version', () => {
    const file = boxFile('one');
    const before = stackWith(file);
    writeFileSync(file, 'two');
    const after = stackWith(file);
    for (const path of ['Vbox/Resource/Identity', 'V1/Resource/Identity', 'V1/Resource/Config', 'Libvirt/Resource/Config']) {
      expect(byPath(after, path).triggers).toEqual(byPath(before, path).triggers);
    }
    expect(byPath(after, 'Vbox/Resource/Config').triggers.payload).not.toEqual(byPath(before, 'Vbox/Resource/Config').triggers.payload);
  });

  test('parents before children, and the release step after the version and all its providers', () => {
    const s = stackWith(boxFile('x'));
    const ref = (path: string) => `null_resource.${idOf(s, path)}`;
    expect(byPath(s, 'V1/Resource/Identity').depends_on).toEqual([ref('Web/Resource/Config')]);
    expect(byPath(s, 'Vbox/Resource/Identity').depends_on).toEqual([ref('V1/Resource/Config')]);
    const release = byPath(s, 'V1/Release');
    expect(release.depends_on).toEqual([ref('V1/Resource/Config'), ref('Vbox/Resource/Config'), ref('Libvirt/Resource/Config')]);
    expect(release.triggers.providers).toBe(`\${${ref('Vbox/Resource/Identity')}.id},\${${ref('Libvirt/Resource/Identity')}.id}`);
    expect(decodePayload(byPath(s, 'V1/Resource/Config').triggers.payload).desired).toEqual({ description: 'First' });
    expect(decodePayload(release.triggers.payload)).toMatchObject({
      kind: 'registry.box-version',
      key: 'acme/web/1.0.0',
      desired: { description: 'First', released: true },
    });
    expect(release.provisioner[0]['local-exec'].command).toBe('$${HANGAR_NODE:-node} "$HANGAR_CLI" apply');
    const inventory = decodeInventory(byPath(s, 'Hangar/Inventory').triggers.inventory).map((p) => `${p.kind} ${p.key}`);
    expect(inventory).toEqual([
      'registry.box acme/web',
      'registry.box-version acme/web/1.0.0',
      'registry.box-provider acme/web/1.0.0/virtualbox',
      'registry.box-provider acme/web/1.0.0/libvirt',
    ]);
  });

  test('hangar diff sees one desired state per version: its description and release state', () => {
    const app = new App({ outdir: tempDir() });
    const stack = new TerraformStack(app, 'diff');
    const box = new Box(stack, 'Web', { owner: 'acme', name: 'web' });
    new BoxVersion(stack, 'V1', { box, version: '1.0.0', description: 'First', released: true });
    app.synth();
    const versions = desiredStateIn(join(app.outdir, 'stacks', 'diff')).filter((p) => p.kind === 'registry.box-version');
    expect(versions).toEqual([expect.objectContaining({ key: 'acme/web/1.0.0', desired: { description: 'First', released: true } })]);
  });

  test('invalid properties fail at construction with the bad value and the fix', () => {
    const setup = () => {
      const stack = new TerraformStack(Testing.app(), 'x');
      const box = new Box(stack, 'B', { owner: 'acme', name: 'web' });
      return { stack, box, version: new BoxVersion(stack, 'V', { box, version: '1.0.0' }) };
    };
    const { stack, box, version } = setup();
    expect(() => new BoxVersion(stack, 'V2', { box, version: 'v1' })).toThrow(/BoxVersion version "v1" is invalid: use MAJOR\[.MINOR\[.PATCH\]\]/);
    expect(() => new BoxProvider(stack, 'P1', { version, name: '../x', url: 'https://e.com/b' })).toThrow(/BoxProvider name "..\/x" is invalid/);
    expect(() => new BoxProvider(stack, 'P2', { version, name: 'vb' })).toThrow(/give either url .* or file .*, not neither/);
    expect(() => new BoxProvider(stack, 'P3', { version, name: 'vb', url: 'https://e.com/b', file: '/x' })).toThrow(/not both/);
    expect(() => new BoxProvider(stack, 'P4', { version, name: 'vb', url: 'ftp://e.com/b' })).toThrow(/url "ftp:\/\/e.com\/b" is not an http\(s\) URL/);
    expect(() => new BoxProvider(stack, 'P5', { version, name: 'vb', url: 'https://e.com/b', checksum: 'abc' })).toThrow(/checksum and checksumType together/);
    expect(() =>
      new BoxProvider(stack, 'P6', { version, name: 'vb', url: 'https://e.com/b', checksum: 'abc', checksumType: BoxChecksumType.SHA1 }),
    ).toThrow(/checksum "abc" is not 40 hexadecimal digits, as sha1 needs/);
    expect(() => new BoxProvider(stack, 'P7', { version, name: 'vb', file: '/no/such/file.box' })).toThrow(/file "\/no\/such\/file.box" cannot be read/);
    expect(() => new BoxProvider(stack, 'P8', { version, name: 'vb', file: boxFile('x'), checksum: 'ab' })).toThrow(/checksum is computed from file/);
    const url = 'https://e.com/b';
    expect(() => new BoxProvider(stack, 'A1', { version, name: 'vb', url, architecture: 'sparc' as BoxArchitecture })).toThrow(
      /architecture "sparc" is not one of amd64, i386/,
    );
    expect(() => new BoxProvider(stack, 'A2', { version, name: 'vb', url, defaultArchitecture: true })).toThrow(/defaultArchitecture needs an architecture/);
    new BoxProvider(stack, 'A3', { version, name: 'arch', url, architecture: BoxArchitecture.AMD64, defaultArchitecture: true });
    expect(() => new BoxProvider(stack, 'A4', { version, name: 'arch', url, architecture: BoxArchitecture.AMD64 })).toThrow(
      /BoxProvider arch \(amd64\) is declared twice for version acme\/web\/1.0.0/,
    );
    expect(() => new BoxProvider(stack, 'A5', { version, name: 'arch', url, architecture: BoxArchitecture.ARM64, defaultArchitecture: true })).toThrow(
      /already defaultArchitecture; mark only one/,
    );
    expect(() => new BoxProvider(stack, 'A6', { version, name: 'arch', url })).toThrow(/give every arch of version acme\/web\/1.0.0 an architecture/);
  });

  test('an architecture is part of the provider identity; defaultArchitecture only of its config', () => {
    const render = (defaultArchitecture: boolean, architecture = BoxArchitecture.ARM64) =>
      synth((stack) => {
        const box = new Box(stack, 'Web', { owner: 'acme', name: 'web' });
        const version = new BoxVersion(stack, 'V1', { box, version: '1.0.0' });
        new BoxProvider(stack, 'Arm', { version, name: 'virtualbox', url: 'https://example.com/arm.box', architecture, defaultArchitecture });
      });
    const plain = render(false);
    expect(decodePayload(byPath(plain, 'Arm/Resource/Config').triggers.payload)).toMatchObject({
      key: 'acme/web/1.0.0/virtualbox/arm64',
      desired: { url: 'https://example.com/arm.box', checksum: '', checksumType: '' },
    });
    expect(decodePayload(byPath(plain, 'Arm/Resource/Config').triggers.payload).desired).not.toHaveProperty('defaultArchitecture');
    const flagged = render(true);
    expect(decodePayload(byPath(flagged, 'Arm/Resource/Config').triggers.payload).desired).toMatchObject({ defaultArchitecture: true });
    expect(byPath(flagged, 'Arm/Resource/Identity').triggers).toEqual(byPath(plain, 'Arm/Resource/Identity').triggers);
    expect(byPath(render(false, BoxArchitecture.AMD64), 'Arm/Resource/Identity').triggers).not.toEqual(byPath(plain, 'Arm/Resource/Identity').triggers);
  });
});
