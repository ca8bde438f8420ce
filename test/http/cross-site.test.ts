/** The cross-site check on its own: which headers make a send ours, and which another site's. */
import { describe, expect, it } from 'vitest';
import { isSameSite } from '../../server/http/cross-site.ts';

const allowed = new Set(['https://partner.example']);
const check = (headers: { origin?: string; secFetchSite?: string; host?: string }) =>
  isSameSite(
    {
      origin: headers.origin,
      secFetchSite: headers.secFetchSite,
      host: headers.host ?? 'chat.example',
    },
    allowed,
  );

describe('isSameSite', () => {
  describe('with Sec-Fetch-Site (every current browser)', () => {
    it('passes same-origin and none (typed or bookmarked)', () => {
      expect(check({ secFetchSite: 'same-origin' })).toBe(true);
      expect(check({ secFetchSite: 'none' })).toBe(true);
    });

    it('refuses same-site and cross-site, whatever Origin says', () => {
      expect(check({ secFetchSite: 'same-site' })).toBe(false);
      expect(check({ secFetchSite: 'cross-site', origin: 'https://chat.example' })).toBe(false);
    });

    it('passes an origin listed in ALLOWED_ORIGINS even cross-site', () => {
      expect(check({ secFetchSite: 'cross-site', origin: 'https://partner.example' })).toBe(true);
    });
  });

  describe('with Origin only (older browsers)', () => {
    it('passes the host the request came to and refuses another', () => {
      expect(check({ origin: 'https://chat.example' })).toBe(true);
      expect(check({ origin: 'https://evil.example' })).toBe(false);
      expect(check({ origin: 'null' })).toBe(false);
    });
  });

  describe('with neither header (curl, the 2011 client)', () => {
    it('passes: no browser a page could trick', () => {
      expect(check({})).toBe(true);
    });
  });
});
