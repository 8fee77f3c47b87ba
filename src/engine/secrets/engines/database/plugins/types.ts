/** A connection's settings as a plugin needs them (the stored config, password included). */
export interface ConnectionSettings {
  readonly connection_url: string;
  readonly username: string;
  readonly password: string;
  readonly max_open_connections: number;
  readonly max_idle_connections: number;
  /** Seconds; 0 is unlimited. */
  readonly max_connection_lifetime: number;
}

/** Values substituted into statements: `{{name}}`, `{{username}}`, `{{password}}`, `{{expiration}}`. */
export type StatementValues = Readonly<Record<string, string>>;

/** An open connection (pool) to one database. */
export interface PluginSession {
  /** A round trip to the database (verify_connection). */
  verify(): Promise<void>;
  /**
   * Runs statements in one transaction with the values substituted; a failure rolls it back.
   * Each string may hold several statements separated by `;` (as Vault splits them).
   */
  exec(statements: readonly string[], values: StatementValues): Promise<void>;
  /** Drops a user with the plugin's own logic (when a role gives no revocation statements). */
  dropUser?(username: string): Promise<void>;
  close(): Promise<void>;
}

/** A database plugin (Vault's `plugin_name`): how to connect, and its default statements. */
export interface DatabasePlugin {
  readonly name: string;
  readonly defaultUsernameTemplate: string;
  /** Used when a role gives none; empty means the session's dropUser (or nothing). */
  readonly defaultRevocation: readonly string[];
  readonly defaultRenew: readonly string[];
  readonly defaultRotateRoot: readonly string[];
  readonly defaultRotateStatic: readonly string[];
  /** `{{expiration}}` as this database reads it. */
  expiration(ms: number): string;
  /** Checks the connection fields; returns a message naming the field, or undefined. */
  check(settings: ConnectionSettings): string | undefined;
  open(settings: ConnectionSettings): PluginSession;
}

/** Values that would escape the quotes of a statement (`'{{password}}'`, `"{{name}}"`) are refused. */
const UNSAFE = /['"`\\\0]/;

/** Substitutes `{{key}}` in a statement; throws when a value could break out of its quotes. */
export function substitute(statement: string, values: StatementValues): string {
  return statement.replace(/\{\{\s*([a-z_]+)\s*\}\}/g, (whole, key: string) => {
    const value = values[key];
    if (value === undefined) return whole;
    if (UNSAFE.test(value)) throw new Error(`the ${key === 'password' ? 'password' : `value of {{${key}}}`} contains a quote, backslash or NUL, which cannot be placed in SQL`);
    return value;
  });
}

// Split once per list: a role's lists are the same arrays while its memoized row is unchanged.
const splitLists = new WeakMap<readonly string[], readonly string[]>();

/**
 * The single statements of a role's list: each entry split on `;` as Vault does, except entries
 * with a `$$` body (a PostgreSQL function or DO block), which run whole.
 */
export function splitStatements(statements: readonly string[]): readonly string[] {
  let split = splitLists.get(statements);
  if (!split) {
    split = statements.flatMap((s) => (s.includes('$$') ? [s] : s.split(';'))).map((s) => s.trim()).filter((s) => s !== '');
    splitLists.set(statements, split);
  }
  return split;
}

/** A database's error without the secret values of the statement (MySQL quotes the SQL near an error). */
export function redacted(err: unknown, values: StatementValues): Error {
  let message = (err as Error)?.message ?? String(err);
  for (const key of ['password']) if (values[key]) message = message.split(values[key]).join('*****');
  return new Error(message);
}
