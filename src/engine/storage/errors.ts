/** A unique constraint refused a write: the thing exists already (possibly written by a racing request). */
export class UniqueViolation extends Error {
  constructor(cause: unknown) {
    super('unique constraint violated', { cause });
    this.name = 'UniqueViolation';
  }
}

/** Waits between retries of a transaction that lost a race; a little random so racers spread out. */
export function backoff(attempt: number): Promise<void> {
  const ms = Math.min(200, 5 * 2 ** attempt) * (0.5 + Math.random());
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export const MAX_TX_ATTEMPTS = 8;
