/**
 * The page's lifecycle as the tab coordination needs it: is this tab seen,
 * and is it about to stop running. A tab that is hidden has its timers
 * throttled, and one that is frozen (`freeze`) or leaving (`pagehide`) runs
 * nothing at all, so it must not be the one that polls for the others.
 *
 * See https://developer.chrome.com/docs/web-platform/page-lifecycle-api
 */

/** `hidden`/`visible`: visibilitychange; `frozen`/`resumed`: freeze/resume; `left`/`back`: pagehide/pageshow. */
export type PageEvent = 'visible' | 'hidden' | 'frozen' | 'resumed' | 'left' | 'back';

export interface PageLife {
  visible(): boolean;
  /** Calls `listener` on each lifecycle event; returns a function that stops it. */
  listen(listener: (event: PageEvent) => void): () => void;
}

/** The real page's lifecycle, read from `document` and `window`. */
export function browserPageLife(): PageLife {
  return {
    visible: () => document.visibilityState === 'visible',
    listen(listener) {
      const onVisibility = () =>
        listener(document.visibilityState === 'visible' ? 'visible' : 'hidden');
      const onFreeze = () => listener('frozen');
      const onResume = () => listener('resumed');
      const onPageHide = () => listener('left');
      // A page coming back from the back/forward cache (`persisted`); a fresh load starts anew.
      const onPageShow = (event: PageTransitionEvent) => {
        if (event.persisted) listener('back');
      };
      document.addEventListener('visibilitychange', onVisibility);
      document.addEventListener('freeze', onFreeze);
      document.addEventListener('resume', onResume);
      window.addEventListener('pagehide', onPageHide);
      window.addEventListener('pageshow', onPageShow);
      return () => {
        document.removeEventListener('visibilitychange', onVisibility);
        document.removeEventListener('freeze', onFreeze);
        document.removeEventListener('resume', onResume);
        window.removeEventListener('pagehide', onPageHide);
        window.removeEventListener('pageshow', onPageShow);
      };
    },
  };
}
