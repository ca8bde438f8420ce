/**
 * `fromSqlTime`: the MySQL store's reading of a `DATETIME(3)` (as mysql2
 * gives it with `dateStrings`) must give back the ISO time the message was
 * appended with, byte for byte, or a message read back would differ from the
 * one published.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fromSqlTime } from '../../server/store/mysql-appender.ts';

/** What mysql2 gives for a DATETIME(3): no fraction at all when it is zero. */
function asMysql2Gives(date: Date): string {
  const iso = date.toISOString(); // 2026-11-30T03:20:19.123Z
  const sql = `${iso.slice(0, 10)} ${iso.slice(11, 23)}`;
  return date.getUTCMilliseconds() === 0 ? sql.slice(0, 19) : sql;
}

describe('fromSqlTime', () => {
  it('gives back the ISO time for every DATETIME(3), with or without a fraction', () => {
    const dates = fc.date({
      min: new Date('1000-01-01T00:00:00.000Z'),
      max: new Date('9999-12-31T23:59:59.999Z'),
      noInvalidDate: true,
    });
    const whole = dates.map((d) => new Date(d.getTime() - d.getUTCMilliseconds()));
    fc.assert(
      fc.property(fc.oneof(dates, whole), (date) => {
        expect(fromSqlTime(asMysql2Gives(date))).toBe(date.toISOString());
      }),
      { seed: 11, numRuns: 2_000 },
    );
  });

  it('reads other shapes through Date: a six-digit fraction, a T separator', () => {
    expect(fromSqlTime('2026-11-30 03:20:19.123456')).toBe('2026-11-30T03:20:19.123Z');
    expect(fromSqlTime('2026-11-30T03:20:19')).toBe('2026-11-30T03:20:19.000Z');
    expect(fromSqlTime('2026-11-30 03:20:19')).toBe('2026-11-30T03:20:19.000Z');
  });
});
