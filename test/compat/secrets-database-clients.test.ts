import { closeDatabaseSessions } from '../../src/engine/secrets/engines/database/store';
import { describeOfficialClients, haveGo, secretsTarget } from '../helpers/compat';
import { haveMariaDb, startMariaDb } from '../helpers/mariadb';
import { havePostgres, startTargetPostgres } from '../helpers/postgres-target';

/**
 * The official clients, unchanged, against the database engine: the Go client
 * (test/compat/vault-go/database) and hvac (test/compat/python/test_vault_database.py), each with
 * its own mount on one Hangar, one private PostgreSQL and one private MariaDB.
 */
describeOfficialClients('database engine with the official clients', async () => {
  const [pg, my, hangar] = await Promise.all([startTargetPostgres(), startMariaDb(), secretsTarget()]);
  await pg.admin('CREATE TABLE items (id int); INSERT INTO items VALUES (1), (2)');
  return {
    env: {
      ...hangar.env,
      PG_URL_TEMPLATE: pg.urlTemplate,
      PG_HOST: pg.host,
      PG_PORT: String(pg.port),
      PG_ADMIN_USER: pg.adminUser,
      PG_ADMIN_PASSWORD: pg.adminPassword,
      MYSQL_DSN_TEMPLATE: my.dsnTemplate,
      MYSQL_HOST: my.host,
      MYSQL_PORT: String(my.port),
      MYSQL_ADMIN_USER: my.adminUser,
      MYSQL_ADMIN_PASSWORD: my.adminPassword,
    },
    async close() {
      await closeDatabaseSessions();
      await hangar.close();
      await Promise.all([pg.stop(), my.stop()]);
    },
  };
}, {
  runnable: havePostgres() && haveMariaDb() && haveGo(),
  goPackages: ['./database/...'],
  pythonFiles: ['test_vault_database.py'],
});
