import { randomBytes } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { z } from 'zod';
import { AuditDevice, AuditDeviceConfig, auditBroker, deleteDevice, fileModeOption, parseBoolOption, readDevice, readDevices, writeDevice } from './audit-device';
import { badInput } from '../core/request';
import { EngineRoute, SecretsRequest } from '../core/types';

const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
/** The options Vault's file device knows; others are refused so that a typo is not silently ignored. */
const FILE_OPTIONS = ['file_path', 'path', 'log_raw', 'hmac_accessor', 'prefix', 'format', 'mode', 'elide_list_responses', 'fallback', 'filter'];

/** `file/` from `file`, `/file/`; a 400 naming the path when a segment is not a plain name. */
function devicePath(req: SecretsRequest): string {
  const trimmed = (req.params.path ?? '').replace(/^\/+|\/+$/g, '');
  if (trimmed === '' || trimmed.split('/').some((s) => !SEGMENT.test(s)) || trimmed.length > 256) {
    throw badInput(`path "${trimmed}" is invalid: use letters, digits, ".", "_" and "-" (segments separated by "/")`);
  }
  return `${trimmed}/`;
}

const OptionValue = z.union([z.string(), z.number(), z.boolean()]).transform(String);
const EnableBody = z.object({
  type: z.string({ message: 'type is required: "file"' }),
  description: z.string().max(1024).optional(),
  options: z.record(z.string(), OptionValue).optional(),
  local: z.boolean().optional(),
});
const HashBody = z.object({ input: z.string({ message: 'input is required: the string to hash' }) });

/** What `sys/audit` shows of a device: never its salt. */
const shown = (d: AuditDeviceConfig) => ({ type: d.type, description: d.description, options: d.options, local: d.local, path: d.path });

/**
 * Checks a device's options and that its file opens for appending (Vault's sanity check at enable),
 * so that a device that can never log is refused now rather than blocking every later request.
 */
function checkFileDevice(options: Record<string, string>): void {
  const unknown = Object.keys(options).filter((k) => !FILE_OPTIONS.includes(k));
  if (unknown.length) throw badInput(`options.${unknown[0]}: unknown option of the file audit device (known: ${FILE_OPTIONS.join(', ')})`);
  if (options.format !== undefined && options.format !== 'json') throw badInput(`options.format: only "json" is supported by Hangar, got "${options.format}"`);
  for (const name of ['log_raw', 'hmac_accessor', 'elide_list_responses']) parseBoolOption(options, name, false);
  const mode = fileModeOption(options);
  const target = options.file_path;
  if (!target) throw badInput('options.file_path is required: an absolute file path, "stdout" or "discard"');
  if (target === 'stdout' || target === 'discard') return;
  // Relative paths would depend on the server's working directory: refused.
  if (!isAbsolute(target) || target.includes('\0')) throw badInput(`options.file_path: must be an absolute path, "stdout" or "discard", got "${target}"`);
  try {
    appendFileSync(target, '', { mode });
  } catch (err) {
    throw badInput(`options.file_path: cannot open "${target}" for appending (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

/** `sys/audit` (list), `sys/audit/:path` (enable, disable), `sys/audit-hash/:path` (Vault's audit devices). */
export const auditSystemRoutes: EngineRoute[] = [
  {
    pattern: 'audit',
    sudo: true,
    readOnly: true,
    read: async (req) => {
      const devices = await readDevices(req.core, req.db);
      return { data: Object.fromEntries(devices.map((d) => [d.path, shown(d)])), topLevel: true };
    },
  },
  {
    pattern: 'audit/*path',
    sudo: true,
    body: EnableBody,
    write: async (req) => {
      const path = devicePath(req);
      const body = req.body as z.infer<typeof EnableBody>;
      if (body.type !== 'file') throw badInput(`type: unknown audit device type "${body.type}": Hangar has the "file" device`);
      if (await readDevice(req.core, req.db, path)) throw badInput(`path already in use: an audit device is enabled at "${path}"`);
      const options = { ...body.options };
      // Vault's file device also reads `path` for `file_path`.
      if (options.file_path === undefined && options.path !== undefined) options.file_path = options.path;
      checkFileDevice(options);
      const device: AuditDeviceConfig = { path, type: 'file', description: body.description ?? '', options, local: body.local ?? false, salt: randomBytes(32).toString('base64') };
      await writeDevice(req.core, req.db, device);
      req.afterCommit(async () => auditBroker(req.core).invalidate());
      return undefined;
    },
    delete: async (req) => {
      await deleteDevice(req.core, req.db, devicePath(req));
      req.afterCommit(async () => auditBroker(req.core).invalidate());
      return undefined;
    },
  },
  {
    pattern: 'audit-hash/*path',
    body: HashBody,
    readOnly: true,
    write: async (req) => {
      const path = devicePath(req);
      const device = await readDevice(req.core, req.db, path);
      if (!device) throw badInput(`unknown audit device "${path}"`);
      return { data: { hash: new AuditDevice(device).hash((req.body as z.infer<typeof HashBody>).input) }, topLevel: true };
    },
  },
];
