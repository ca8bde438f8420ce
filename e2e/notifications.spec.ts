/**
 * Mentions and desktop notifications: `@name` marked for that person, and
 * one notification per message however many tabs are open (the tab that
 * runs the poll notifies), only while hidden, asked for only on the
 * person's choice.
 */
import type { BrowserContext } from '@playwright/test';
import { expect, test } from './fixtures.ts';

/** Every tab of the context looks hidden, and each notification it shows is reported. */
async function watchNotifications(context: BrowserContext): Promise<string[]> {
  const shown: string[] = [];
  await context.exposeBinding('notified', (_source, text: string) => shown.push(text));
  await context.addInitScript(() => {
    Object.defineProperty(document, 'visibilityState', { get: () => 'hidden' });
    Object.defineProperty(document, 'hidden', { get: () => true });
    const Real = window.Notification;
    const report = (window as unknown as { notified(text: string): void }).notified;
    window.Notification = class extends Real {
      constructor(title: string, options?: NotificationOptions) {
        super(title, options);
        report(`${title}: ${options?.body ?? ''}`);
      }
    } as typeof Notification;
  });
  return shown;
}

test.describe('mentions and notifications', () => {
  test('three hidden tabs show exactly one notification for a mention, none for the rest', async ({
    browser,
    openChat,
    server,
    room,
  }) => {
    const context = await browser.newContext();
    try {
      await context.grantPermissions(['notifications'], { origin: server.url });
      const shown = await watchNotifications(context);
      const first = await openChat({ context });
      await first.nickname.fill('Ann');
      await first.nickname.blur();
      const tabs = [first, await openChat({ context }), await openChat({ context })];
      for (const tab of tabs) await expect(tab.nickname).toHaveValue('Ann');
      for (const tab of tabs) await tab.page.getByText('Notifications', { exact: true }).click();
      const mode = first.page.getByLabel('Desktop notifications');
      await mode.selectOption({ label: 'When someone mentions me' });
      for (const tab of tabs) {
        await expect(tab.page.getByLabel('Desktop notifications')).toHaveValue('mentions');
      }

      await server.send(room, 'nothing for Ann here', 'Bob');
      await server.send(room, '@Ann have a look', 'Bob');
      for (const tab of tabs) await expect(tab.texts).toHaveCount(2);
      await expect.poll(() => shown.length).toBe(1);
      // Over the next seconds no other tab adds one.
      const until = Date.now() + 3_000;
      await expect
        .poll(() => (Date.now() < until ? `counting ${shown.length}` : `held ${shown.length}`), {
          timeout: 6_000,
          intervals: [200],
        })
        .toBe('held 1');
      expect(shown).toEqual([`Bob in #${room}: @Ann have a look`]);

      // Ann's own name is marked, in words too, in every tab.
      for (const tab of tabs) {
        const mentioned = tab.messages.filter({ hasText: '@Ann have a look' });
        await expect(mentioned).toHaveClass(/mentions-me/);
        await expect(mentioned.locator('mark.mention')).toHaveText('@Ann');
        await expect(mentioned.locator('.mention-badge')).toHaveText('mentions you');
        await expect(tab.messages.locator('mark')).toHaveCount(1);
      }

      // Muted in one tab: muted in all, and nothing more is shown.
      await tabs[2]!.page.getByLabel('Mute this room').check();
      for (const tab of tabs) await expect(tab.page.getByLabel('Mute this room')).toBeChecked();
      await server.send(room, '@Ann again', 'Bob');
      for (const tab of tabs) await expect(tab.texts).toHaveCount(3);
      const quietUntil = Date.now() + 2_000;
      await expect
        .poll(() => (Date.now() < quietUntil ? 'watching' : `after ${shown.length}`), {
          timeout: 5_000,
          intervals: [200],
        })
        .toBe('after 1');
    } finally {
      await context.close();
    }
  });

  test('asks for permission only when the person picks a choice that needs it', async ({
    browser,
    openChat,
  }) => {
    const context = await browser.newContext();
    try {
      await context.addInitScript(() => {
        const w = window as unknown as { asked: number };
        w.asked = 0;
        const real = Notification.requestPermission.bind(Notification);
        Notification.requestPermission = () => {
          w.asked += 1;
          return real();
        };
      });
      const ann = await openChat({ context });
      await expect(ann.status).toHaveText('connected');
      const asked = () => ann.page.evaluate(() => (window as unknown as { asked: number }).asked);
      expect(await asked()).toBe(0);
      await ann.page.getByText('Notifications', { exact: true }).click();
      await ann.page.getByLabel('Desktop notifications').selectOption('all');
      await expect.poll(asked).toBe(1);
    } finally {
      await context.close();
    }
  });
});
