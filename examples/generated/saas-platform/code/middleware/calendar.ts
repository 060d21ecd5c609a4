// rl-design 0.1.0 runtime, copied verbatim from the rl-design package. Do not edit: generate again.
/**
 * Calendar periods in an IANA time zone (quota windows): the id of the day or month a
 * moment falls in there, and when that period starts and ends, daylight-saving changes included.
 */

const zoneFormats = new Map<string, Intl.DateTimeFormat>();

function zonedFields(ms: number, timeZone: string): number[] {
  let format = zoneFormats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    zoneFormats.set(timeZone, format);
  }
  const fields: Record<string, number> = {};
  for (const part of format.formatToParts(new Date(ms))) {
    if (part.type !== 'literal') fields[part.type] = Number(part.value);
  }
  return [fields.year ?? 1970, fields.month ?? 1, fields.day ?? 1, fields.hour ?? 0, fields.minute ?? 0, fields.second ?? 0];
}

function zoneOffsetMs(ms: number, timeZone: string): number {
  const f = zonedFields(ms, timeZone);
  const asUtc = Date.UTC(f[0] ?? 1970, (f[1] ?? 1) - 1, f[2] ?? 1, f[3] ?? 0, f[4] ?? 0, f[5] ?? 0);
  return asUtc - (ms - (((ms % 1000) + 1000) % 1000));
}

/**
 * Epoch ms of the first moment of (year, month, day) in the zone (DST-aware): local midnight, or,
 * where the clocks skip midnight (America/Santiago, America/Havana spring forward at 00:00), the
 * moment they jump to, when the day begins.
 */
function zonedMidnight(year: number, month: number, day: number, timeZone: string): number {
  const guess = Date.UTC(year, month - 1, day);
  const first = guess - zoneOffsetMs(guess, timeZone);
  const at = guess - zoneOffsetMs(first, timeZone);
  // midnight skipped: `at` is an hour (the gap) before it, still on the day before; the day
  // begins where the offset before the jump puts midnight, the jump itself
  const f = zonedFields(at, timeZone);
  return f[2] === day ? at : guess - zoneOffsetMs(at, timeZone);
}

function pad2(n: number): string {
  return n < 10 ? '0' + n : String(n);
}

/** The calendar day or month containing ms, in the zone: its id (2026-03 / 2026-03-29) and bounds. */
export function calendarPeriod(ms: number, period: 'day' | 'month', timeZone: string): { id: string; start: number; end: number } {
  const f = zonedFields(ms, timeZone);
  const y = f[0] ?? 1970;
  const m = f[1] ?? 1;
  const d = f[2] ?? 1;
  if (period === 'month') {
    return {
      id: y + '-' + pad2(m),
      start: zonedMidnight(y, m, 1, timeZone),
      end: m === 12 ? zonedMidnight(y + 1, 1, 1, timeZone) : zonedMidnight(y, m + 1, 1, timeZone),
    };
  }
  const next = new Date(Date.UTC(y, m - 1, d + 1));
  return {
    id: y + '-' + pad2(m) + '-' + pad2(d),
    start: zonedMidnight(y, m, d, timeZone),
    end: zonedMidnight(next.getUTCFullYear(), next.getUTCMonth() + 1, next.getUTCDate(), timeZone),
  };
}
