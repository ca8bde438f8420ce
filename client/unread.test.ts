import { describe, expect, it } from 'vitest';
import { UnreadTitle } from './unread.ts';

function titled(visible: boolean) {
  const page = { visible, title: '#main · Long-Poll Chat' };
  const unread = new UnreadTitle({
    title: page.title,
    visible: () => page.visible,
    setTitle: (title) => {
      page.title = title;
    },
  });
  return { page, unread };
}

describe('UnreadTitle', () => {
  describe('while the tab is hidden', () => {
    it('should count the messages that arrive in the title', () => {
      const { page, unread } = titled(false);
      unread.arrived(2);
      unread.arrived(0);
      unread.arrived(1);
      expect(page.title).toBe('(3) #main · Long-Poll Chat');
    });
  });

  describe('when the tab is shown again', () => {
    it('should clear the count', () => {
      const { page, unread } = titled(false);
      unread.arrived(4);
      page.visible = true;
      unread.visibilityChanged();
      expect(page.title).toBe('#main · Long-Poll Chat');
      expect(unread.unread).toBe(0);
    });
  });

  describe('while the tab is seen', () => {
    it('should count nothing', () => {
      const { page, unread } = titled(true);
      unread.arrived(3);
      expect(page.title).toBe('#main · Long-Poll Chat');
    });
  });
});
