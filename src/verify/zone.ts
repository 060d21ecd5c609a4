/**
 * Calendar windows in a named IANA time zone, computed the way the middleware does it for
 * `fixed-window.lua` calendar mode: the caller names the current period (its id goes into the
 * key) and passes the period's end as epoch milliseconds.
 */

interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** The wall-clock time in `timeZone` at the instant `epochMs`. */
export function wallClock(epochMs: number, timeZone: string): WallClock {
  const parts = Object.fromEntries(formatter(timeZone).formatToParts(new Date(epochMs)).map((p) => [p.type, p.value]));
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour),
    minute: Number(parts.minute),
    second: Number(parts.second),
  };
}

/** Offset of the zone from UTC at an instant, in ms (Berlin in winter: +3 600 000). */
function offsetMs(epochMs: number, timeZone: string): number {
  const w = wallClock(epochMs, timeZone);
  const asUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  return asUtc - Math.floor(epochMs / 1000) * 1000;
}

/** The instant at which the wall clock in `timeZone` shows 00:00 on the given date. */
export function zonedMidnight(year: number, month: number, day: number, timeZone: string): number {
  const guess = Date.UTC(year, month - 1, day);
  let t = guess - offsetMs(guess, timeZone);
  // Once more with the offset at the first estimate (the offset can change between them).
  t = guess - offsetMs(t, timeZone);
  return t;
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** The calendar period containing `epochMs` in `timeZone`: its id (for the key) and its bounds. */
export function calendarWindow(
  epochMs: number,
  period: 'day' | 'month',
  timeZone: string,
): { id: string; startMs: number; endMs: number } {
  const w = wallClock(epochMs, timeZone);
  if (period === 'month') {
    const next = w.month === 12 ? { y: w.year + 1, m: 1 } : { y: w.year, m: w.month + 1 };
    return {
      id: `${pad(w.year, 4)}-${pad(w.month)}`,
      startMs: zonedMidnight(w.year, w.month, 1, timeZone),
      endMs: zonedMidnight(next.y, next.m, 1, timeZone),
    };
  }
  const tomorrow = new Date(Date.UTC(w.year, w.month - 1, w.day + 1));
  return {
    id: `${pad(w.year, 4)}-${pad(w.month)}-${pad(w.day)}`,
    startMs: zonedMidnight(w.year, w.month, w.day, timeZone),
    endMs: zonedMidnight(tomorrow.getUTCFullYear(), tomorrow.getUTCMonth() + 1, tomorrow.getUTCDate(), timeZone),
  };
}

/** Whether `timeZone` is a zone this runtime knows. */
export function validTimeZone(timeZone: string): boolean {
  try {
    formatter(timeZone);
    return true;
  } catch {
    return false;
  }
}
