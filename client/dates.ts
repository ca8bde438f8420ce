/**
 * The day separators of the message list: which calendar day a message
 * belongs to, and what the separator says ("Today", "Yesterday", or the
 * date). Days are the reader's own, in the browser's time zone, as the
 * messages' times are shown. Pure functions of a date and "now", so the
 * rules are tested without a page (`dates.test.ts`).
 */

/** The local calendar day of a date, as `YYYY-MM-DD`: equal for two times of one day. */
export function dayKey(date: Date): string {
  const month = String(date.getMonth() + 1).padStart(2, '0');
  const day = String(date.getDate()).padStart(2, '0');
  return `${date.getFullYear()}-${month}-${day}`;
}

/** Whole calendar days from `date` to `now` (0: the same day), across daylight-saving changes. */
function daysBefore(date: Date, now: Date): number {
  const noon = (d: Date) => new Date(d.getFullYear(), d.getMonth(), d.getDate(), 12).getTime();
  return Math.round((noon(now) - noon(date)) / 86_400_000);
}

/**
 * What a separator says for the day of `date`: "Today", "Yesterday", the
 * weekday and date within the year ("Monday, November 30"), with the year
 * for an older one. A date ahead of today (a clock ahead of ours) is shown
 * as a date.
 */
export function dayLabel(date: Date, now: Date, locale?: string): string {
  const days = daysBefore(date, now);
  if (days === 0) return 'Today';
  if (days === 1) return 'Yesterday';
  const sameYear = date.getFullYear() === now.getFullYear();
  return new Intl.DateTimeFormat(locale, {
    weekday: 'long',
    day: 'numeric',
    month: 'long',
    ...(sameYear ? {} : { year: 'numeric' }),
  }).format(date);
}
