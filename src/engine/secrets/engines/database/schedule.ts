import { Cron } from 'croner';

/** Vault's shortest `rotation_window` (its `minRotationWindowSeconds`). */
export const MIN_ROTATION_WINDOW = 3600;

/** The fields of a standard cron line, as Vault's parser (robfig/cron's standard one) bounds them. */
const FIELDS: readonly { readonly name: string; readonly min: number; readonly max: number; readonly names?: readonly string[] }[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'] },
  { name: 'day of week', min: 0, max: 6, names: ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] },
];

const PART = /^(?:(\*|\?)|([0-9]+|[A-Za-z]{3})(?:-([0-9]+|[A-Za-z]{3}))?)(?:\/([0-9]+))?$/;

/** One bound of a range: a number in the field's bounds, or (month, day of week) a three-letter name. */
function bound(field: (typeof FIELDS)[number], text: string): number | string {
  const named = field.names?.indexOf(text.toUpperCase()) ?? -1;
  const value = /^[0-9]+$/.test(text) ? Number(text) : named >= 0 ? named + field.min : NaN;
  if (Number.isNaN(value)) return `${field.name}: "${text}" is not a number${field.names ? ' or a name' : ''}`;
  if (value < field.min || value > field.max) return `${field.name}: ${value} is beyond [${field.min}, ${field.max}]`;
  return value;
}

/**
 * Checks a `rotation_schedule` against the grammar Vault accepts (exactly five fields of `*`, `?`,
 * numbers, ranges, steps, lists, and month and weekday names; no descriptors such as `@daily`, no
 * seconds, no `L`/`W`/`#` extensions). Returns the problem, or undefined when it is valid.
 */
function problemOf(spec: string): string | undefined {
  const fields = spec.trim().split(/\s+/);
  if (fields.length !== 5) return `expected exactly 5 fields, found ${spec.trim() === '' ? 0 : fields.length}`;
  for (let i = 0; i < 5; i++) {
    const field = FIELDS[i];
    for (const part of fields[i].split(',')) {
      const m = PART.exec(part);
      if (!m) return `${field.name}: "${part}" is not a value, range or step`;
      if (m[4] !== undefined && Number(m[4]) === 0) return `${field.name}: step of "${part}" must be positive`;
      if (m[2] === undefined) continue;
      const lo = bound(field, m[2]);
      if (typeof lo === 'string') return lo;
      if (m[3] === undefined) continue;
      const hi = bound(field, m[3]);
      if (typeof hi === 'string') return hi;
      if (hi < lo) return `${field.name}: beginning of range (${lo}) beyond end of range (${hi})`;
    }
  }
  return undefined;
}

/**
 * A parsed `rotation_schedule`, in UTC. The Vault parser's grammar is checked here; the computing of
 * occurrences is croner's (five fields, day of month and day of week combined with OR when both are
 * restricted, as cron and Vault do).
 */
export class RotationSchedule {
  /** Parses a schedule; returns the problem as a string when Vault would refuse it. */
  static parse(spec: string): RotationSchedule | string {
    const problem = problemOf(spec);
    if (problem) return problem;
    try {
      return new RotationSchedule(spec);
    } catch (err) {
      return (err as Error).message;
    }
  }

  private readonly cron: Cron;

  private constructor(spec: string) {
    this.cron = new Cron(spec.trim(), { timezone: 'UTC', mode: '5-part', sloppyRanges: true, paused: true });
  }

  /** The first occurrence strictly after `afterMs` (epoch ms), or undefined if there is none. */
  next(afterMs: number): number | undefined {
    return this.cron.nextRun(new Date(afterMs))?.getTime();
  }
}

/** The next occurrence of a schedule already stored (so valid) after `afterMs`. */
export function nextOccurrence(spec: string, afterMs: number): number {
  const schedule = RotationSchedule.parse(spec);
  const next = typeof schedule === 'string' ? undefined : schedule.next(afterMs);
  // A stored schedule is valid; one with no next occurrence (e.g. "0 0 31 2 *") is tried again in a year.
  return next ?? afterMs + 366 * 86_400_000;
}
