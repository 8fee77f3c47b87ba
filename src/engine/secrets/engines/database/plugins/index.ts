import { mysqlLegacyPlugins, mysqlPlugin } from './mysql';
import { postgresqlPlugin } from './postgresql';
import { DatabasePlugin } from './types';

/** The plugins by `plugin_name`. */
export const PLUGINS: ReadonlyMap<string, DatabasePlugin> = new Map([postgresqlPlugin, mysqlPlugin, ...mysqlLegacyPlugins].map((p) => [p.name, p]));
