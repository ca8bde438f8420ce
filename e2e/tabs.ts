/**
 * Watching the tabs of one browser from outside: which of them polls
 * (`PollWatch`, from the requests Chromium makes), and when a message shows
 * in a tab (`arrival`, from the page's own DOM events and clock).
 */
import type { BrowserContext, Page, Request } from '@playwright/test';
import type { ChatPage } from './chat-page.ts';

/** The room a `/recv` request polls. */
function roomOf(request: Request): string | undefined {
  const url = new URL(request.url());
  return url.pathname === '/recv' ? (url.searchParams.get('room') ?? 'main') : undefined;
}

/** The `/recv` requests of a browser context: which are waiting, from which page. */
export class PollWatch {
  readonly #waiting = new Map<Request, { room: string; page: Page }>();
  readonly #listeners = new Set<(request: Request, page: Page) => void>();
  readonly #last = new Map<string, Page>();
  readonly #peak = new Map<string, number>();

  constructor(context: BrowserContext) {
    context.on('request', (request) => {
      const room = roomOf(request);
      const page = request.frame().page();
      if (room === undefined) return;
      this.#waiting.set(request, { room, page });
      this.#last.set(room, page);
      this.#peak.set(room, Math.max(this.#peak.get(room) ?? 0, this.pollers(room).length));
      for (const listener of this.#listeners) listener(request, page);
    });
    const done = (request: Request) => this.#waiting.delete(request);
    context.on('requestfinished', done);
    context.on('requestfailed', done);
    // A closed tab's poll ends with it, and Chromium reports nothing more about it.
    context.on('page', (page) =>
      page.on('close', () => {
        for (const [request, poll] of this.#waiting)
          if (poll.page === page) this.#waiting.delete(request);
      }),
    );
  }

  /** The pages with a waiting poll in `room`. */
  pollers(room: string): Page[] {
    return [...this.#waiting.values()]
      .filter((poll) => poll.room === room)
      .map((poll) => poll.page);
  }

  /** The most polls that waited at once in `room` since the last call (or since the watch began). */
  peak(room: string): number {
    const peak = this.#peak.get(room) ?? 0;
    this.#peak.set(room, this.pollers(room).length);
    return peak;
  }

  /** The page that sent the latest poll in `room`: the one that polls for the others. */
  lastPoller(room: string): Page | undefined {
    return this.#last.get(room);
  }

  /** Resolves with the page of the next poll in `room` from a page other than `not`, and when it left. */
  nextPoll(room: string, not?: Page): Promise<{ page: Page; at: number }> {
    return new Promise((resolve) => {
      const listener = (request: Request, page: Page) => {
        if (roomOf(request) !== room || page === not) return;
        this.#listeners.delete(listener);
        resolve({ page, at: Date.now() });
      };
      this.#listeners.add(listener);
    });
  }
}

type Watched = Window & {
  __arrival?: Promise<number>;
  __acked?: Promise<number>;
  __sentAt?: number;
};

/**
 * Starts watching `tab` for a message with `text`: resolves, once it is
 * installed, with a function that resolves with the time (the browser's
 * `Date.now()`) the message showed there.
 */
export async function arrival(tab: ChatPage, text: string): Promise<() => Promise<number>> {
  await tab.page.evaluate((wanted) => {
    const list = document.querySelector('#messages')!;
    (window as Watched).__arrival = new Promise<number>((resolve) => {
      const observer = new MutationObserver((records) => {
        for (const record of records) {
          for (const node of record.addedNodes) {
            if (
              node instanceof HTMLElement &&
              node.querySelector('.text')?.textContent === wanted
            ) {
              observer.disconnect();
              resolve(Date.now());
              return;
            }
          }
        }
      });
      observer.observe(list, { childList: true });
    });
  }, text);
  return () => tab.page.evaluate(() => (window as Watched).__arrival!);
}

/** Resolves, once installed, with a function that resolves when `tab`'s next pending send is acknowledged (leaves the pending list). */
export async function acknowledgement(tab: ChatPage): Promise<() => Promise<number>> {
  await tab.page.evaluate(() => {
    const pending = document.querySelector('#pending')!;
    (window as Watched).__acked = new Promise<number>((resolve) => {
      const observer = new MutationObserver((records) => {
        if (records.some((record) => record.removedNodes.length > 0)) {
          observer.disconnect();
          resolve(Date.now());
        }
      });
      observer.observe(pending, { childList: true });
    });
  });
  return () => tab.page.evaluate(() => (window as Watched).__acked!);
}

/** Notes when `tab`'s composer next submits (the moment its person presses Enter). */
export async function watchSubmit(tab: ChatPage): Promise<() => Promise<number>> {
  await tab.page.evaluate(() => {
    document.querySelector('#composer')!.addEventListener(
      'submit',
      () => {
        (window as Watched).__sentAt = Date.now();
      },
      { once: true, capture: true },
    );
  });
  return () => tab.page.evaluate(() => (window as Watched).__sentAt!);
}

/** Makes `tab` report itself hidden or visible, as a tab switch does, and fires `visibilitychange`. */
export async function setVisible(tab: ChatPage, visible: boolean): Promise<void> {
  await tab.page.evaluate(
    (state) => {
      Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => state });
      Object.defineProperty(document, 'hidden', {
        configurable: true,
        get: () => state === 'hidden',
      });
      document.dispatchEvent(new Event('visibilitychange'));
    },
    visible ? 'visible' : 'hidden',
  );
}
