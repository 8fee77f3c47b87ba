import { chmodSync, copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { serverCommand } from '../../src/cli/commands/server';
import { readConfigFile } from '../../src/cli/config-file';
import { parseCommand } from '../../src/cli/options';
import { hangar } from '../helpers/cli';
import { tempDir } from '../helpers/storage';
import { TestCa } from '../helpers/tls';

const EXAMPLE = join(__dirname, '..', '..', 'docs', 'hangar.hcl.example');

function configFile(text: string, name = 'hangar.hcl', mode = 0o600): string {
  const file = join(tempDir('hangar-config-'), name);
  writeFileSync(file, text);
  chmodSync(file, mode);
  return file;
}

const parse = (argv: string[], env: NodeJS.ProcessEnv = {}) => parseCommand(serverCommand, argv, env);

describe('hangar server -config', () => {
  test('keys map to the flags: attributes, listeners, storage, other blocks', () => {
    const file = configFile(`
      data = "/srv/hangar"
      workers = 2
      listener "secrets" {
        address = "127.0.0.1:18200"
      }
      storage "postgres" { url = "postgres://db.internal/hangar" }
      catalog { default_policy = "allow" }
      secrets { key_file = "/etc/hangar/key" }
    `);
    const { options, fromFile } = parse(['-config', file]);
    expect(options).toMatchObject({
      'data': '/srv/hangar',
      'workers': '2',
      'secrets-addr': '127.0.0.1:18200',
      'storage': 'postgres',
      'postgres-url': 'postgres://db.internal/hangar',
      'catalog-default-policy': 'allow',
      'secrets-key-file': '/etc/hangar/key',
    });
    expect(fromFile['secrets-addr']).toEqual({ value: '127.0.0.1:18200', file, line: 5, key: 'listener.secrets.address' });
    expect(parse(['--config', configFile('storage "sqlite" { path = "/d" }')]).options).toMatchObject({ storage: 'sqlite', data: '/d' });
  });

  test('the JSON form, by content', () => {
    const file = configFile('{\n  "log_level": "warn",\n  "listener": {"catalog": {"address": "127.0.0.1:18500"}}\n}\n', 'hangar.json');
    expect(parse(['-config', file]).options).toMatchObject({ 'log-level': 'warn', 'catalog-addr': '127.0.0.1:18500' });
  });

  test('precedence: flag > environment > file', () => {
    const file = configFile('log_level = "warn"\nworkers = 3\nlog_format = "json"\n');
    const { options, fromFile } = parse(['-config', file, '-log-level', 'error'], { HANGAR_WORKERS: '2' });
    expect(options).toMatchObject({ 'log-level': 'error', 'workers': '2', 'log-format': 'json' });
    expect(Object.keys(fromFile)).toEqual(['log-format']);
    // The file itself may come from the environment.
    expect(parse([], { HANGAR_CONFIG: file }).options['log-level']).toBe('warn');
  });

  test('one-dash long flags, for the command\'s own options only', () => {
    expect(parse(['-dev', '-dev-root-token', 'dev', '-data=/d']).options).toMatchObject({ 'dev': true, 'dev-root-token': 'dev', 'data': '/d' });
    expect(parse(['-log-level=warn', '-h']).help).toBe(true);
    expect(() => parse(['-nope'])).toThrow(/-n/);
  });

  test.each([
    ['an unknown key', 'colour = "blue"', /hangar\.hcl:1: colour: unknown key \(it would set --colour/],
    ['an unknown listener', '\nlistener "tcp" { address = "x" }', /:2: listener\.tcp\.address: unknown key .*listener "secrets" sets --secrets-addr/],
    ['the check itself', 'check = true', /:1: check: --check is set on the command line only/],
    ['dev mode', 'dev = true', /:1: dev: --dev is set on the command line only/],
    ['a list', 'workers = [1, 2]', /:1: workers: expected a string or a number, not a list/],
    ['a block for a string', 'catalog { default_policy { a = 1 } }', /catalog\.default_policy: expected a string or a number, not a block/],
    ['an option set twice', 'data = "/a"\nstorage "sqlite" { path = "/b" }', /:2: storage\.sqlite\.path: --data is already set at line 1 \(data\)/],
    ['a syntax error', 'data = \n', /hangar\.hcl:2: expected a value/],
  ])('%s is an error naming the file, the line and the key', (_, text, message) => {
    expect(() => parse(['-config', configFile(text)])).toThrow(message);
  });

  test('booleans are true or false, not strings', () => {
    const spec = { ...serverCommand, options: { ...serverCommand.options, 'tls-disable': { type: 'boolean' as const, help: '' } } };
    expect(readConfigFile(configFile('tls_disable = true'), spec).settings['tls-disable']?.value).toBe(true);
    expect(() => readConfigFile(configFile('tls_disable = "true"'), spec)).toThrow(/:1: tls_disable: expected true or false, not the string "true"/);
  });

  test('tls_require_and_verify_client_cert, the public services\' name, sets the listener\'s client-auth mode', () => {
    const spec = { ...serverCommand, options: { ...serverCommand.options, 'secrets-tls-client-auth': { type: 'string' as const, help: '' } } };
    const read = (value: string) => readConfigFile(configFile(`listener "secrets" { tls_require_and_verify_client_cert = ${value} }`), spec).settings;
    expect(read('true')['secrets-tls-client-auth']?.value).toBe('require');
    expect(read('false')['secrets-tls-client-auth']).toBeUndefined();
  });

  test('a file that others may write, or read with a password in it, is warned about', () => {
    expect(parse(['-config', configFile('data = "/d"', 'a.hcl', 0o644)]).warnings).toEqual([]);
    expect(parse(['-config', configFile('data = "/d"', 'a.hcl', 0o666)]).warnings).toEqual([expect.stringMatching(/may be written by others.*chmod go-w/)]);
    const secret = configFile('storage "postgres" {\n  url = "postgres://hangar:FAKEXSECRET@db/hangar"\n}', 'a.hcl', 0o644);
    const [warning] = parse(['-config', secret]).warnings;
    expect(warning).toMatch(/holds a password \(storage\.postgres\.url, line 2\).*chmod o-r/);
    expect(warning).not.toMatch(/FAKEXSECRET/);
    expect(parse(['-config', configFile(readFileSync(secret, 'utf8'), 'a.hcl', 0o640)]).warnings).toEqual([]);
  });

  test('the annotated example sets every option a file may set', () => {
    const { settings } = readConfigFile(EXAMPLE, serverCommand);
    const settable = Object.entries(serverCommand.options).filter(([, o]) => !o.commandLineOnly).map(([name]) => name);
    expect(Object.keys(settings).sort()).toEqual(settable.sort());
  });

  test('-check validates the example and bad values, starting nothing (the bundled CLI)', () => {
    // The example's TLS files, made here: -check loads them.
    const tls = tempDir('hangar-config-tls-');
    const ca = new TestCa(tls);
    for (const name of ['hangar', 'registry', 'secrets', 'catalog']) ca.issue(name);
    copyFileSync(new TestCa(tempDir('hangar-config-clients-'), 'clients CA').ca, join(tls, 'clients-ca.pem'));
    const example = configFile(readFileSync(EXAMPLE, 'utf8').replaceAll('/etc/hangar/tls/', `${tls}/`));
    const ok = hangar(['server', '-config', example, '-check']);
    expect(ok).toMatchObject({ code: 0, stdout: 'configuration is valid\n' });
    const bad = configFile('listener "registry" {\n  address = "nonsense"\n}\nstorage "postgres" { url = "db" }\n');
    const res = hangar(['server', '-config', bad, '-check']);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(new RegExp(`${bad}:2: listener\\.registry\\.address: --registry-addr: .*HOST:PORT`));
    const url = hangar(['server', '-config', bad, '-check', '-registry-addr', '127.0.0.1:0']);
    expect(url.stderr).toMatch(/hangar\.hcl:4: storage\.postgres\.url: --postgres-url must be a URL such as postgres:/);
    expect(hangar(['server', '-config', join(bad, 'missing'), '-check']).stderr).toMatch(/cannot read the configuration file .*ENOTDIR/);
  });
});
