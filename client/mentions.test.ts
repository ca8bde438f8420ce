import { describe, expect, it } from 'vitest';
import { mentionParts, mentions } from './mentions.ts';
import { type NotifyChoices, noChoices, readChoices, worthTelling } from './notify.ts';

describe('mentions', () => {
  it('should find @name in any case, standing alone', () => {
    expect(mentions('hi @ann, look', 'Ann')).toBe(true);
    expect(mentions('@Ann', 'Ann')).toBe(true);
    expect(mentions('(@ANN)', 'Ann')).toBe(true);
    expect(mentions('@Ann Lee: yes', 'Ann Lee')).toBe(true);
  });

  it('should not take a longer name, an address, or an empty nickname', () => {
    expect(mentions('@Annabel', 'Ann')).toBe(false);
    expect(mentions('mail@Ann.org', 'Ann')).toBe(false);
    expect(mentions('Ann without the at', 'Ann')).toBe(false);
    expect(mentions('@ hello', '')).toBe(false);
  });

  it('should split the text into plain runs and mentions that join back into it', () => {
    const parts = mentionParts('@Ann and @ann again, not @Annabel', 'Ann');
    expect(parts).toEqual([
      { text: '@Ann', mention: true },
      { text: ' and ', mention: false },
      { text: '@ann', mention: true },
      { text: ' again, not @Annabel', mention: false },
    ]);
    expect(parts.map((part) => part.text).join('')).toBe('@Ann and @ann again, not @Annabel');
  });
});

describe('notification choices', () => {
  const hi = { nickname: 'Bob', text: 'hi all' };
  const ping = { nickname: 'Bob', text: '@Ann look' };

  it('should read what is stored, and the defaults for anything else', () => {
    expect(readChoices(undefined)).toEqual(noChoices);
    expect(readChoices('not json')).toEqual(noChoices);
    expect(readChoices('{"mode":"all","sound":true,"muted":["x",3]}')).toEqual({
      mode: 'all',
      sound: true,
      muted: ['x'],
    });
    expect(readChoices('{"mode":"loud"}').mode).toBe('off');
  });

  it('should tell mentions, or every message, and nothing from a muted room', () => {
    const mentionsOnly: NotifyChoices = { mode: 'mentions', sound: false, muted: [] };
    expect(worthTelling([hi, ping], mentionsOnly, 'main', 'Ann')).toEqual([ping]);
    expect(worthTelling([hi, ping], { ...mentionsOnly, mode: 'all' }, 'main', 'Ann')).toEqual([
      hi,
      ping,
    ]);
    expect(worthTelling([hi, ping], { ...mentionsOnly, muted: ['main'] }, 'main', 'Ann')).toEqual(
      [],
    );
    expect(worthTelling([hi, ping], noChoices, 'main', 'Ann')).toEqual([]);
  });
});
