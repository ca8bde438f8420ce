/** Which parts of a message become links, and that nothing else does. */
import { describe, expect, it } from 'vitest';
import { splitLinks } from './links.ts';

const links = (text: string) =>
  splitLinks(text).flatMap((part) => ('href' in part ? [part.href] : []));

describe('splitLinks', () => {
  it('should keep a text without links as one plain part', () => {
    expect(splitLinks('hello there')).toEqual([{ text: 'hello there' }]);
  });

  it('should give nothing for an empty text', () => {
    expect(splitLinks('')).toEqual([]);
  });

  it('should split out an http and an https link, in order, keeping the text around them', () => {
    expect(splitLinks('see https://example.com/a?b=1 or http://x.org now')).toEqual([
      { text: 'see ' },
      { text: 'https://example.com/a?b=1', href: 'https://example.com/a?b=1' },
      { text: ' or ' },
      { text: 'http://x.org', href: 'http://x.org/' },
      { text: ' now' },
    ]);
  });

  it('should join back to exactly the text', () => {
    const text = 'a https://x.org/(y) b (https://z.org/w). c\nhttps://q.org';
    expect(
      splitLinks(text)
        .map((part) => part.text)
        .join(''),
    ).toBe(text);
  });

  it('should leave javascript: and data: addresses as text', () => {
    expect(links('javascript:alert(1) data:text/html,<b>x</b> JavaScript://%0aalert(1)')).toEqual(
      [],
    );
  });

  it('should leave other schemes and bare domains as text', () => {
    expect(links('ftp://x.org mailto:a@b.org www.example.com file:///etc/passwd')).toEqual([]);
  });

  it('should not take markup into an address', () => {
    expect(splitLinks('https://x.org/<b>x</b>')).toEqual([
      { text: 'https://x.org/', href: 'https://x.org/' },
      { text: '<b>x</b>' },
    ]);
  });

  it('should leave out the punctuation that ends a sentence', () => {
    expect(links('Look: https://x.org/page. Or https://y.org/?q=1, https://z.org!')).toEqual([
      'https://x.org/page',
      'https://y.org/?q=1',
      'https://z.org/',
    ]);
  });

  it('should keep brackets that belong to the address and drop those around it', () => {
    expect(links('(https://en.wikipedia.org/wiki/Chat_(disambiguation))')).toEqual([
      'https://en.wikipedia.org/wiki/Chat_(disambiguation)',
    ]);
    expect(links('[https://x.org/a]')).toEqual(['https://x.org/a']);
  });

  it('should find a link whose scheme is in capitals', () => {
    expect(links('HTTPS://Example.com/A')).toEqual(['https://example.com/A']);
  });

  it('should leave an address with no host as text', () => {
    expect(links('http:// and https://')).toEqual([]);
  });

  it('should not make a link of an http address inside another word', () => {
    expect(links('xhttps://x.org')).toEqual([]);
  });
});

describe('splitLinks, for a link that shows where it goes', () => {
  it('should end an address at an invisible character', () => {
    for (const invisible of [
      '\u200B',
      '\u200D',
      '\u2060',
      '\uFEFF',
      '\u00AD',
      '\u202E',
      '\u2067',
      '\u{E0041}',
    ]) {
      const parts = splitLinks(`https://x.org/a${invisible}evil.example`);
      expect(parts[0]).toEqual({ text: 'https://x.org/a', href: 'https://x.org/a' });
      expect(parts.map((part) => part.text).join('')).toBe(
        `https://x.org/a${invisible}evil.example`,
      );
    }
  });

  it('should leave an address with userinfo as text: it goes to the host after the @', () => {
    expect(links('https://google.com@evil.example/login')).toEqual([]);
    expect(links('http://user:pass@x.org/ https://@x.org/')).toEqual([]);
    expect(splitLinks('https://google.com@evil.example')).toEqual([
      { text: 'https://google.com@evil.example' },
    ]);
  });

  it('should show a host outside ASCII as the punycode name it goes to', () => {
    // A Cyrillic а in place of the Latin a.
    expect(splitLinks('go to https://\u0430pple.com/id now')).toEqual([
      { text: 'go to ' },
      { text: 'https://xn--pple-43d.com/id', href: 'https://xn--pple-43d.com/id' },
      { text: ' now' },
    ]);
    expect(splitLinks('https://münchen.de:8080/straße')).toEqual([
      {
        text: 'https://xn--mnchen-3ya.de:8080/straße',
        href: 'https://xn--mnchen-3ya.de:8080/stra%C3%9Fe',
      },
    ]);
    // A punycode host is shown as written: it is what the link goes to.
    expect(splitLinks('https://xn--pple-43d.com')).toEqual([
      { text: 'https://xn--pple-43d.com', href: 'https://xn--pple-43d.com/' },
    ]);
  });
});
