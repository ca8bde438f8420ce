/**
 * deploy/monitoring/chat-alerts.yml, the alert rules the chat ships, checked
 * by Prometheus's own tool (Debian's `prometheus` package): `promtool check
 * rules` validates the file, and `promtool test rules` runs
 * chat-alerts.test.yml, which feeds each rule series above and below its
 * threshold. Every metric the rules read must be one the chat really serves
 * on /metrics. Skipped without promtool, except in CI, where .ci/run
 * installs it.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { startTestChat } from '../helpers/chat.ts';
import { describeWith, needs } from '../helpers/needs.ts';

const RULES = fileURLToPath(new URL('../../deploy/monitoring/chat-alerts.yml', import.meta.url));
const RULE_TESTS = fileURLToPath(
  new URL('../../deploy/monitoring/chat-alerts.test.yml', import.meta.url),
);
const ALERTS = [
  'ChatStoreDown',
  'ChatBusDown',
  'ChatPollsNearLimit',
  'ChatRefusedSendsRising',
  'ChatEventLoopLag',
];

const run = promisify(execFile);
const promtool = (...args: string[]) => run('promtool', args);

describeWith(needs.command('promtool'), 'deploy/monitoring/chat-alerts.yml (promtool)', () => {
  it('holds the five alerts, and promtool check rules accepts it', async () => {
    const { stdout } = await promtool('check', 'rules', RULES);
    expect(stdout).toContain('SUCCESS: 5 rules found');
    const names = [...(await readFile(RULES, 'utf8')).matchAll(/- alert: (\w+)/g)].map((m) => m[1]);
    expect(names).toEqual(ALERTS);
  });

  it('really checks: a rule with a broken expression is refused', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'chat-rules-'));
    try {
      const broken = join(dir, 'rules.yml');
      const source = await readFile(RULES, 'utf8');
      await writeFile(broken, source.replace('(chat_store_up) == 0', '(chat_store_up) == == 0'));
      await expect(promtool('check', 'rules', broken)).rejects.toThrow(/parse error/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('fires each alert above its threshold for its duration, and not below (promtool test rules)', async () => {
    const { stdout } = await promtool('test', 'rules', RULE_TESTS);
    expect(stdout).toContain('SUCCESS');
    const tests = await readFile(RULE_TESTS, 'utf8');
    for (const alert of ALERTS) expect(tests).toContain(`alertname: ${alert}`);
  });

  it('reads only metrics the chat serves on /metrics', async () => {
    const chat = await startTestChat();
    try {
      const served = await (await chat.get('/metrics')).text();
      const rules = await readFile(RULES, 'utf8');
      const used = new Set(
        [...rules.matchAll(/expr: (.*)/g)].flatMap((m) =>
          [...m[1]!.matchAll(/\b((?:chat|nodejs|process)_[a-z0-9_]+)\b/g)].map((n) => n[1]!),
        ),
      );
      expect(used.size).toBeGreaterThanOrEqual(6);
      // A labelled counter with no sample yet is served as its TYPE line.
      for (const name of used) {
        expect({ name, served: new RegExp(`^(# TYPE )?${name}[{ ]`, 'm').test(served) }).toEqual({
          name,
          served: true,
        });
      }
    } finally {
      await chat.close();
    }
  });
});
