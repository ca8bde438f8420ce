/**
 * The unread count in the document title: `(3) #main · Long-Poll Chat`
 * while the tab is hidden, so a tab in the background still tells its
 * person that something was said. Cleared when the tab is seen again.
 */

export interface UnreadTitleOptions {
  /** The title with nothing unread. */
  title: string;
  visible(): boolean;
  setTitle(title: string): void;
}

export class UnreadTitle {
  #unread = 0;
  readonly #options: UnreadTitleOptions;

  constructor(options: UnreadTitleOptions) {
    this.#options = options;
  }

  get unread(): number {
    return this.#unread;
  }

  /** `count` messages arrived (nothing counts while the tab is seen). */
  arrived(count: number): void {
    if (count === 0 || this.#options.visible()) return;
    this.#unread += count;
    this.#options.setTitle(`(${this.#unread}) ${this.#options.title}`);
  }

  /** The tab's visibility changed: once it is seen, everything is read. */
  visibilityChanged(): void {
    if (!this.#options.visible() || this.#unread === 0) return;
    this.#unread = 0;
    this.#options.setTitle(this.#options.title);
  }
}
