import { describe, it } from 'vitest';
import { createMysqlPool, MysqlStore } from '../../server/store/mysql-store.ts';
import { serviceUrl } from '../helpers/env.ts';
import { describeStore } from './contract.ts';
import { testDatabases } from './mysql-database.ts';

const serverUrl = serviceUrl('MYSQL_URL');

if (serverUrl === undefined) {
  describe('mysql store', () => {
    it.skip('needs MYSQL_URL (CI sets it to the local MariaDB)', () => {});
  });
} else {
  describeStore(
    'mysql',
    async () => {
      const databases = testDatabases(serverUrl);
      const url = await databases.create();
      return {
        open: async () => new MysqlStore(createMysqlPool(url)),
        url,
        emptyDatabase: () => databases.create(),
        teardown: () => databases.dropAll(),
      };
    },
    { processes: true },
  );
}
