import pino, { Logger } from 'pino';
import { redactUrl, SECRET_HEADERS } from './http/tokens';

export type { Logger };

export type LogFormat = 'json' | 'pretty';

/** The per-request line (engine/http/observe.ts): `GET /v1/sys/health 200 0.4ms`, read by pino-pretty. */
interface RequestLine {
  readonly api?: string;
  readonly method?: string;
  readonly url?: string;
  readonly status?: number;
  readonly ms?: number;
  readonly msg?: string;
}

/**
 * pino-pretty as a synchronous stream in this process (not a worker transport, which needs files
 * the one-file bundle does not have): one readable line per record, colours on a terminal.
 */
function prettyStream(destination: NodeJS.WritableStream): pino.DestinationStream {
  const pretty = require('pino-pretty') as typeof import('pino-pretty');
  const colorize = (destination as { isTTY?: boolean }).isTTY === true;
  return pretty.build({
    destination,
    colorize,
    sync: true,
    translateTime: 'HH:MM:ss.l',
    // One line per record: the API first, the request line's fields as text, the rest (request id) inline.
    singleLine: true,
    ignore: 'pid,hostname,api,method,url,status,ms',
    messageFormat: (log: RequestLine, messageKey: string) =>
      (log.api ? `${log.api}: ` : '') +
      (log.status !== undefined && log.method !== undefined ? `${log.method} ${log.url} ${log.status} ${log.ms}ms` : String(log[messageKey as 'msg'] ?? '')),
  });
}

/**
 * Structured JSON logs. Request URLs lose their token query parameters, headers are not logged
 * at all, and any `headers.<secret>` or `password`/`token` field anywhere is censored.
 */
export function createLogger(options: { level?: string; format?: LogFormat; destination?: NodeJS.WritableStream } = {}): Logger {
  const destination = options.destination ?? process.stdout;
  // Pretty on a terminal, JSON elsewhere (files, pipes, log collectors), unless told otherwise.
  const format = options.format ?? ((destination as { isTTY?: boolean }).isTTY ? 'pretty' : 'json');
  return pino(
    {
      level: options.level ?? process.env.HANGAR_LOG_LEVEL ?? 'info',
      redact: {
        paths: [
          ...SECRET_HEADERS.map((h) => `req.headers["${h}"]`),
          '*.password',
          '*.token',
          '*.secret',
          '*.client_token',
        ],
        censor: '[redacted]',
      },
      serializers: {
        req: (req: { method: string; url: string; hostname?: string; ip?: string }) => ({
          method: req.method,
          url: redactUrl(req.url),
          host: req.hostname,
          remoteAddress: req.ip,
        }),
      },
    },
    format === 'pretty' ? prettyStream(destination) : (destination as pino.DestinationStream),
  );
}

/** A logger that writes nothing (the in-process engine of `hangar apply`, tests). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
