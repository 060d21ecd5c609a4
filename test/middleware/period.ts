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

/** The same for a calendar day: its id from Intl's formatting, its start and end found by bisection. */
export function calendarDayFor(ms: number, timeZone: string): { id: string; start: number; end: number } {
  const dayId = (t: number): string =>
    new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date(t));
  const id = dayId(ms);
  const edge = (lo: number, hi: number, inside: (t: number) => boolean): number => {
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (inside(mid)) lo = mid;
      else hi = mid;
    }
    return hi;
  };
  // the end: the first millisecond of another day; the start: the first millisecond of this one
  const end = edge(ms, ms + 2 * 86_400_000, (t) => dayId(t) === id);
  const start = edge(ms - 2 * 86_400_000, ms, (t) => dayId(t) !== id);
  return { id, start, end };
}
