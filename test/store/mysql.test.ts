import { createMysqlPool, MysqlStore } from '../../server/store/mysql-store.ts';
import { serviceUrl } from '../helpers/env.ts';
import { describeWith, needs } from '../helpers/needs.ts';
import { describeStore } from './contract.ts';
import { testDatabases } from './mysql-database.ts';

const serverUrl = serviceUrl('MYSQL_URL');

describeWith(needs.service('MYSQL_URL'), 'mysql store', () => {
  describeStore(
    'mysql',
    async () => {
      const databases = testDatabases(serverUrl!);
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
});
