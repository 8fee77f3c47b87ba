import type { SqlValue } from './types';

/**
 * The most values one `IN (?, …)` list of a statement takes. SQLite refuses a statement of more than
 * 32,766 variables and PostgreSQL one of more than 65,535: a list that grows with the data (the
 * versions of a box) or with a request is read in several statements of at most this many.
 */
export const IN_LIST_MAX = 500;

/**
 * The rows `read` returns for each slice of `values` (at most IN_LIST_MAX), given the slice's
 * placeholders (`?, ?, ?`) for its `IN (…)`, in the order of the slices. A statement that sorts or
 * pages sorts each slice only: for lookups by key, not for a page of an ordered query.
 */
export async function allIn<T>(values: readonly SqlValue[], read: (placeholders: string, slice: SqlValue[]) => Promise<T[]>): Promise<T[]> {
  const rows: T[] = [];
  for (let i = 0; i < values.length; i += IN_LIST_MAX) {
    const slice = values.slice(i, i + IN_LIST_MAX);
    rows.push(...(await read(slice.map(() => '?').join(', '), slice)));
  }
  return rows;
}
