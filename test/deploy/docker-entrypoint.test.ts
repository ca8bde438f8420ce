/**
 * scripts/docker-entrypoint.mjs, the image's command, run here as the image
 * runs it (`node scripts/docker-entrypoint.mjs` on the build) against the
 * real MariaDB: docker-compose passes the database URL without a password
 * and the password apart (DATABASE_PASSWORD), and the entrypoint puts it
 * into the URL percent-encoded. A password full of URL syntax must reach
 * MariaDB unchanged.
 */
import { randomBytes } from 'node:crypto';
import { createConnection } from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HistoryAnswer } from '../../protocol/protocol.ts';
import { ensureBuilt, ROOT } from '../helpers/build.ts';
import { serviceUrl } from '../helpers/env.ts';
import { describeWith, needs } from '../helpers/needs.ts';
import { type TestDatabases, testDatabases } from '../store/mysql-database.ts';
import { baseEnv, type ChatProcess, runToExit, startChatProcess } from './chat-process.ts';
import { http, postJson } from './http.ts';

const MYSQL_URL = serviceUrl('MYSQL_URL');

/** Every character that means something in a URL, a percent sequence that decodes to another, and quotes. */
const PASSWORD = `p@ss:w/rd%41?#[]&=+ é"'\\$x`;

const entrypoint = (env: Record<string, string>) => ({
  command: process.execPath,
  args: ['scripts/docker-entrypoint.mjs'],
  cwd: ROOT,
  env: { ...baseEnv(), PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
});

describeWith(needs.service('MYSQL_URL'), 'scripts/docker-entrypoint.mjs', () => {
  let databases: TestDatabases;
  /** mysql://<user>@127.0.0.1:3306/<database>: no password, as docker-compose.yml writes it. */
  let urlWithoutPassword: string;
  let user: string;

  beforeAll(async () => {
    await ensureBuilt();
    databases = testDatabases(MYSQL_URL!);
    const url = new URL(await databases.create());
    user = `chat_pw_${randomBytes(4).toString('hex')}`;
    const admin = await createConnection(MYSQL_URL!);
    try {
      await admin.query('CREATE USER ?@? IDENTIFIED BY ?', [user, '%', PASSWORD]);
      await admin.query(`GRANT ALL ON \`${url.pathname.slice(1)}\`.* TO ?@?`, [user, '%']);
    } finally {
      await admin.end();
    }
    url.username = user;
    url.password = '';
    urlWithoutPassword = url.href;
  }, 120_000);

  afterAll(async () => {
    if (!databases) return;
    const admin = await createConnection(MYSQL_URL!);
    try {
      await admin.query('DROP USER IF EXISTS ?@?', [user, '%']);
    } finally {
      await admin.end();
    }
    await databases.dropAll();
  });

  describe('with the URL naming only the user, and DATABASE_PASSWORD apart', () => {
    let chat: ChatProcess;

    beforeAll(async () => {
      chat = await startChatProcess(
        entrypoint({ DATABASE_URL: urlWithoutPassword, DATABASE_PASSWORD: PASSWORD }),
      );
    }, 60_000);
    afterAll(() => chat?.stop());

    it('logs in to MariaDB with a password full of URL syntax, and stores what is sent', async () => {
      expect(chat.output()).toContain('store mysql');
      const sent = await postJson(`${chat.url}/send`, { room: 'entry', text: 'stored in MariaDB' });
      expect(sent.status).toBe(200);
      const history = await http(`${chat.url}/history?room=entry`);
      expect(history.json<HistoryAnswer>().messages.map((m) => m.text)).toEqual([
        'stored in MariaDB',
      ]);
    });
  });

  it('is needed: the same password pasted into the URL does not log in', async () => {
    const pasted = urlWithoutPassword.replace(`${user}@`, `${user}:${PASSWORD}@`);
    const { code, output } = await runToExit(entrypoint({ DATABASE_URL: pasted }));
    expect(code).not.toBe(0);
    expect(output).not.toContain('chat listening');
  });

  it('leaves a URL without a server alone (memory:, sqlite:)', async () => {
    const chat = await startChatProcess(
      entrypoint({ DATABASE_URL: 'memory:', DATABASE_PASSWORD: PASSWORD }),
    );
    try {
      expect(chat.output()).toContain('store memory');
    } finally {
      await chat.stop();
    }
  });

  it('refuses a server URL that names no user to give the password to', async () => {
    const noUser = urlWithoutPassword.replace(`${user}@`, '');
    const { code, output } = await runToExit(
      entrypoint({ DATABASE_URL: noUser, DATABASE_PASSWORD: PASSWORD }),
    );
    expect(code).toBe(1);
    expect(output).toContain('DATABASE_URL names no user');
  });
});
