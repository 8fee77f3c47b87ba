import pino, { Logger } from 'pino';
import { redactUrl, SECRET_HEADERS } from './http/tokens';

export type { Logger };

/**
 * Structured JSON logs. Request URLs lose their token query parameters, headers are not logged
 * at all, and any `headers.<secret>` or `password`/`token` field anywhere is censored.
 */
export function createLogger(options: { level?: string; destination?: NodeJS.WritableStream } = {}): Logger {
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
    (options.destination as pino.DestinationStream | undefined) ?? process.stdout,
  );
}

/** A logger that writes nothing (the in-process engine of `hangar apply`, tests). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
