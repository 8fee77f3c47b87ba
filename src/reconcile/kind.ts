import type { z } from 'zod';
import type { Clients } from './clients';

export type Outcome = 'created' | 'updated' | 'unchanged';

/** How one kind of managed object is read, created or updated, and deleted. */
export interface ResourceKind<Desired> {
  readonly kind: string;
  /** Deletion order across kinds: a higher number is deleted first (a provider before its box). */
  readonly deleteOrder: number;
  readonly desired: z.ZodType<Desired>;
  /**
   * The live object in the shape of Desired, or undefined when it does not exist. `desired`, when
   * given, names what cannot be read back (a box provider's local file path).
   */
  read(clients: Clients, key: string, desired?: Desired): Promise<Desired | undefined>;
  /** Creates the object or brings it to the desired state (idempotent). */
  upsert(clients: Clients, key: string, desired: Desired): Promise<Outcome>;
  /** Deletes the object; false when it was already gone. */
  delete(clients: Clients, key: string): Promise<boolean>;
}

/** The names of the fields whose live value differs from the desired one. */
export function differences<D extends object>(desired: D, actual: D): string[] {
  return Object.keys(desired).filter(
    (k) =>
      (desired as Record<string, unknown>)[k] !== undefined &&
      JSON.stringify((desired as Record<string, unknown>)[k]) !== JSON.stringify((actual as Record<string, unknown>)[k]),
  );
}
