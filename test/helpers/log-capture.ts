import { Writable } from 'node:stream';
import { createLogger, Logger } from '../../src/engine/logger';

export type LogRecord = Record<string, unknown> & { msg?: string; level?: number; reqId?: string };

export interface CapturedLog {
  /** The engine's real logger (redaction and serializers included), writing to memory. */
  readonly logger: Logger;
  /** Everything logged so far, exactly as it would reach a log file. */
  text(): string;
  /** The records logged so far. */
  records(): LogRecord[];
  /** Resolves with the first record, logged already or still to come, that matches. */
  waitFor(predicate: (record: LogRecord) => boolean): Promise<LogRecord>;
}

/** A logger made by `createLogger` whose output is kept in memory for assertions. */
export function captureLog(level = 'trace'): CapturedLog {
  const lines: string[] = [];
  const waiters: { predicate: (record: LogRecord) => boolean; resolve: (record: LogRecord) => void }[] = [];
  const destination = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) {
        lines.push(line);
        const record = JSON.parse(line) as LogRecord;
        for (const waiter of waiters.filter((w) => w.predicate(record))) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(record);
        }
      }
      callback();
    },
  });
  const records = () => lines.map((line) => JSON.parse(line) as LogRecord);
  return {
    logger: createLogger({ level, destination }),
    text: () => lines.join('\n'),
    records,
    waitFor: (predicate) => {
      const found = records().find(predicate);
      return found ? Promise.resolve(found) : new Promise((resolve) => waiters.push({ predicate, resolve }));
    },
  };
}
