import pino, { Logger } from 'pino';
import { redactUrl, SECRET_HEADERS } from './http/tokens';
import { leakWatch } from './leak-watch';

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

/** What every logger shares: the redaction and the request serializer (below), the leak watch's hook. */
function loggerOptions(level: string): pino.LoggerOptions {
  const hooks = leakWatchHooks();
  return {
    level,
    // Only when set: an explicit `hooks: undefined` replaces pino's defaults.
    ...(hooks && { hooks }),
    redact: {
      paths: [...SECRET_HEADERS.map((h) => `req.headers["${h}"]`), '*.password', '*.token', '*.secret', '*.client_token'],
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
  };
}

/**
 * Structured JSON logs. Request URLs lose their token query parameters, headers are not logged
 * at all, and any `headers.<secret>` or `password`/`token` field anywhere is censored.
 */
export function createLogger(options: { level?: string; format?: LogFormat; destination?: NodeJS.WritableStream } = {}): Logger {
  const destination = options.destination ?? process.stdout;
  // Pretty on a terminal, JSON elsewhere (files, pipes, log collectors), unless told otherwise.
  const format = options.format ?? ((destination as { isTTY?: boolean }).isTTY ? 'pretty' : 'json');
  const level = loggerOptions(options.level ?? process.env.HANGAR_LOG_LEVEL ?? 'info');
  if (format === 'pretty') return pino(level, prettyStream(destination));
  return pino(level, destination === process.stdout ? coalescedLines(process.stdout) : (destination as pino.DestinationStream));
}

/**
 * The lines written during one turn of the event loop, sent in one write at its end (and before the
 * process exits). A file or a pipe on stdout is written synchronously, one system call per write: at
 * debug every request writes its line, and the answers of 10,000 blocking queries woken by one write
 * were 10,000 calls. The order of the lines is kept; only their leaving is deferred, by microseconds.
 */
export function coalescedLines(out: { write(text: string): unknown }): pino.DestinationStream {
  let pending: string[] = [];
  const flush = () => {
    if (pending.length === 0) return;
    const text = pending.length === 1 ? pending[0] : pending.join('');
    pending = [];
    out.write(text);
  };
  process.once('exit', flush);
  return {
    write(line: string) {
      if (pending.push(line) === 1) setImmediate(flush);
    },
  };
}

/** Under the test suite's leak watch, every line as written is also copied to the watch (engine/leak-watch.ts). */
function leakWatchHooks(): pino.LoggerOptions['hooks'] {
  const watch = leakWatch();
  return watch && {
    streamWrite: (line: string) => {
      watch.log(line);
      return line;
    },
  };
}

/**
 * A logger that writes nothing (the in-process engine of `hangar apply`, tests). Under the test
 * suite's leak watch it logs everything, to the watch only, so that no level hides a leak.
 */
export function silentLogger(): Logger {
  if (!leakWatch()) return pino({ level: 'silent' });
  return pino(loggerOptions('trace'), { write: () => true } as pino.DestinationStream);
}
