import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../server/store/sqlite-store.ts';
import { describeStore } from './contract.ts';

describeStore(
  'sqlite',
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chat-sqlite-'));
    const file = join(dir, 'chat.sqlite');
    let databases = 0;
    return {
      // NORMAL: no fsync per commit in WAL mode, so 10,000 appends take seconds, not minutes.
      // Ordering does not depend on it; the child processes use the default (FULL).
      open: async () => new SqliteStore(file, { synchronous: 'NORMAL' }),
      url: `sqlite://${file}`,
      emptyDatabase: async () => `sqlite://${join(dir, `empty-${++databases}.sqlite`)}`,
      teardown: async () => rmSync(dir, { recursive: true, force: true }),
    };
  },
  { processes: true },
);
