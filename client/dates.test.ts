/** What the day separators say, in the reader's time zone. */
import { describe, expect, it } from 'vitest';
import { dayKey, dayLabel } from './dates.ts';

// Local times, so the tests hold in any time zone.
const now = new Date(2026, 11, 2, 9, 30);

describe('dayKey', () => {
  it('should be the same for the first and the last minute of a day', () => {
    expect(dayKey(new Date(2026, 11, 2, 0, 0))).toBe('2026-12-02');
    expect(dayKey(new Date(2026, 11, 2, 23, 59))).toBe('2026-12-02');
  });

  it('should differ across midnight', () => {
    expect(dayKey(new Date(2026, 11, 1, 23, 59))).not.toBe(dayKey(new Date(2026, 11, 2, 0, 0)));
  });
});

describe('dayLabel', () => {
  it('should say Today for any time of today, even later than now', () => {
    expect(dayLabel(new Date(2026, 11, 2, 0, 1), now)).toBe('Today');
    expect(dayLabel(new Date(2026, 11, 2, 23, 59), now)).toBe('Today');
  });

  it('should say Yesterday for any time of the day before, however few hours ago', () => {
    expect(dayLabel(new Date(2026, 11, 1, 23, 59), now)).toBe('Yesterday');
    expect(dayLabel(new Date(2026, 11, 1, 0, 0), now)).toBe('Yesterday');
  });

  it('should say Yesterday across a month and a year boundary', () => {
    expect(dayLabel(new Date(2026, 10, 30, 12), new Date(2026, 11, 1, 8))).toBe('Yesterday');
    expect(dayLabel(new Date(2026, 11, 31, 22), new Date(2027, 0, 1, 1))).toBe('Yesterday');
  });

  it('should give the weekday and date, without the year, earlier this year', () => {
    expect(dayLabel(new Date(2026, 10, 30, 12), now, 'en-US')).toBe('Monday, November 30');
  });

  it('should add the year for an earlier year', () => {
    expect(dayLabel(new Date(2025, 11, 25, 12), now, 'en-US')).toBe('Thursday, December 25, 2025');
  });

  it('should follow the locale', () => {
    expect(dayLabel(new Date(2026, 10, 30, 12), now, 'de-DE')).toBe('Montag, 30. November');
  });

  it('should show a day ahead of today as a date, not as Today', () => {
    expect(dayLabel(new Date(2026, 11, 3, 8), now, 'en-US')).toBe('Thursday, December 3');
  });
});
