/**
 * An independent reading of "the calendar month containing t in a time zone", for checking
 * the generated code's Intl arithmetic: the id from Intl's formatting, and the end found by
 * bisection (the first millisecond whose formatted month differs), not by offset maths.
 */
export function monthId(ms: number, timeZone: string): string {
  const parts = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit' }).formatToParts(new Date(ms));
  const get = (t: string): string => parts.find((p) => p.type === t)?.value ?? '';
  return `${get('year')}-${get('month')}`;
}

export function calendarPeriodFor(ms: number, timeZone: string): { id: string; end: number } {
  const id = monthId(ms, timeZone);
  let lo = ms;
  let hi = ms + 33 * 86_400_000;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (monthId(mid, timeZone) === id) lo = mid;
    else hi = mid;
  }
  return { id, end: hi };
}
