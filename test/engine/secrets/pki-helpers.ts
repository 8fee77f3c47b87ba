import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { tempDir } from '../../helpers/storage';

const exec = promisify(execFile);

/**
 * openssl, the judge of the PKI tests: run asynchronously (the server under test lives in this
 * process) on files in a temporary directory. Under CI a missing openssl is a failure.
 */
export class Openssl {
  private readonly dir = tempDir('hangar-pki-');
  private n = 0;

  /** Writes text to a new file and returns its path. */
  file(text: string): string {
    const path = join(this.dir, `f${++this.n}.pem`);
    writeFileSync(path, text.endsWith('\n') ? text : `${text}\n`);
    return path;
  }

  /** Runs openssl; resolves with stdout+stderr and the exit code (never rejects on a non-zero exit). */
  async run(...args: string[]): Promise<{ code: number; out: string }> {
    try {
      const { stdout, stderr } = await exec('openssl', args);
      return { code: 0, out: stdout + stderr };
    } catch (err) {
      const e = err as { code?: number; stdout?: string; stderr?: string };
      if (typeof e.code !== 'number') throw err;
      return { code: e.code, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
    }
  }

  /** `openssl verify` of a leaf against a root, with intermediates as untrusted. */
  verify(root: string, leaf: string, intermediates: readonly string[] = []) {
    const untrusted = intermediates.length ? ['-untrusted', this.file(intermediates.join('\n'))] : [];
    return this.run('verify', '-CAfile', this.file(root), ...untrusted, this.file(leaf));
  }

  async text(cert: string): Promise<string> {
    return (await this.run('x509', '-noout', '-text', '-in', this.file(cert))).out;
  }
}
