// rl-design 0.1.0 runtime, copied verbatim from the rl-design package. Do not edit: generate again.
/**
 * The in-process twin of each Lua script, for rules whose state lives in one process.
 */
import type { Reply } from './store.js';
import type { ScriptName } from './types.js';

function nowUs(): number {
  return Math.floor((performance.timeOrigin + performance.now()) * 1000);
}

interface MemoryEntry {
  value: number | number[] | Map<number, number> | Map<string, string>;
  expiresAt: number;
}

/**
 * The scripts' algorithms for state kept in this process (rules whose primitive is
 * in-process). Same arguments, same replies; node runs each call to completion, so a
 * decision is atomic here too. Only correct for one instance: the state is not shared.
 */
/**
 * A rolling window's wait, as both scripts work it out: until the oldest live buckets (id, count)
 * that free `need` units have left the window, in ms; -1 when they never free enough.
 */
function rollingWait(live: readonly (readonly [number, number])[], need: number, buckets: number, bucketMs: number, now: number): number {
  let freed = 0;
  for (const [id, n] of [...live].sort((p, q) => p[0] - q[0])) {
    freed += n;
    if (freed >= need) return (id + buckets) * bucketMs - now;
  }
  return -1;
}

export class MemoryStore {
  private readonly data = new Map<string, MemoryEntry>();
  private writes = 0;

  run(script: ScriptName, keys: readonly string[], args: readonly (string | number)[]): Reply {
    const a = args.map((x) => x);
    if (script === 'gcra') return this.gcra(keys[0] ?? '', Number(a[0]), Number(a[1]), Number(a[2]));
    if (script === 'sliding-window-log') return this.log(keys, a);
    if (script === 'identity-limits') return this.identity(keys, a);
    return this.window(keys[0] ?? '', a);
  }

  private get(key: string, nowMs: number): MemoryEntry | undefined {
    const entry = this.data.get(key);
    if (entry && entry.expiresAt <= nowMs) {
      this.data.delete(key);
      return undefined;
    }
    return entry;
  }

  private set(key: string, value: MemoryEntry['value'], expiresAt: number): void {
    this.data.set(key, { value, expiresAt });
    if (++this.writes % 1000 === 0) {
      const now = Date.now();
      for (const [k, e] of this.data) if (e.expiresAt <= now) this.data.delete(k);
    }
  }

  /** gcra.lua: tolerance, increment and interval in microseconds (gcraNumbers). */
  private gcra(key: string, tolerance: number, increment: number, interval: number): Reply {
    const now = nowUs();
    const entry = this.get(key, now / 1000);
    let tat = typeof entry?.value === 'number' ? entry.value : 0;
    if (tat < now) tat = now;
    const ahead = tat + increment - now;
    if (ahead > tolerance) {
      return [
        0,
        Math.floor((tolerance - tat + now) / interval),
        increment <= tolerance ? Math.ceil((ahead - tolerance) / 1000) : -1,
        Math.ceil((tat - now) / 1000),
      ];
    }
    const reset = Math.ceil(ahead / 1000);
    this.set(key, tat + increment, now / 1000 + reset);
    return [1, Math.floor((tolerance - ahead) / interval), 0, reset];
  }

  /**
   * identity-limits.lua: every limit of one identity in one hash (keys[0]), all or nothing;
   * {denied_by, then per limit its values}. Same arguments, the same field values (a TAT in
   * microseconds; a window's end in seconds then a 9-digit count; a rolling window's count per
   * bucket in a field named after the limit's and the bucket id), stale buckets deleted when
   * the window is charged, a TTL that only ever moves later.
   */
  private identity(keys: readonly string[], args: readonly (string | number)[]): Reply {
    const now = nowUs();
    const nowMs = Math.floor(now / 1000);
    const key = keys[0] ?? '';
    const entry = this.get(key, now / 1000);
    const hash = entry?.value instanceof Map ? (entry.value as Map<string, string>) : new Map<string, string>();
    const values: number[][] = [];
    const writes: [string, string][] = [];
    const stale: string[] = [];
    let denied = 0;
    let expireAt = 0;
    for (let a = 0, i = 1; a < args.length; i++) {
      const field = String(args[a]);
      const stored = hash.get(field);
      const kind = args[a + 1];
      if (kind === 'g') {
        const tolerance = Number(args[a + 2]);
        const increment = Number(args[a + 3]);
        a += 4;
        let tat = stored === undefined ? 0 : Number(stored);
        if (!(tat >= now && tat <= now + now)) tat = now;
        values.push([tat - now, tat - now + increment]);
        if (tat - now + increment > tolerance) {
          if (denied === 0) denied = i;
        } else {
          writes.push([field, String(tat + increment)]);
          expireAt = Math.max(expireAt, Math.ceil((tat + increment) / 1000));
        }
      } else if (kind === 'w') {
        const limit = Number(args[a + 2]);
        const windowEnd = Number(args[a + 3]);
        const cost = Number(args[a + 4]);
        a += 5;
        const mark = String(Math.floor(windowEnd / 1000));
        const used = stored !== undefined && stored.slice(0, -9) === mark ? Number(stored.slice(-9)) : 0;
        values.push([used, used + cost]);
        if (used + cost > limit) {
          if (denied === 0) denied = i;
        } else {
          writes.push([field, mark + String(used + cost).padStart(9, '0')]);
          expireAt = Math.max(expireAt, Math.max(Number(mark) * 1000, nowMs) + 60000);
        }
      } else {
        const limit = Number(args[a + 2]);
        const bucketMs = Number(args[a + 3]);
        const count = Number(args[a + 4]);
        const cost = Number(args[a + 5]);
        a += 6;
        const current = Math.floor(nowMs / bucketMs);
        const oldest = current - count + 1;
        const live: [number, number][] = [];
        let used = 0;
        let newest = -1;
        let inCurrent = 0;
        // the running total (the oldest bucket it counts, then 9 digits), rolled forward past the
        // buckets that left the window; without one (or one too far behind), every field is read
        const total = hash.get(field);
        const from = total !== undefined && total.length > 9 ? Number(total.slice(0, -9)) : Number.NaN;
        const sum = total !== undefined && total.length > 9 ? Number(total.slice(-9)) : Number.NaN;
        const bucket = (id: number): number => Number(hash.get(`${field}:${id}`) ?? 0);
        if (Number.isFinite(from) && Number.isFinite(sum) && oldest - from <= count) {
          used = sum;
          for (let id = from; id < oldest; id++) {
            if (!hash.has(`${field}:${id}`)) continue;
            used -= bucket(id);
            stale.push(`${field}:${id}`);
          }
          used = Math.max(0, used);
          inCurrent = bucket(current);
          if (used + cost > limit)
            for (let id = oldest; id <= current; id++) {
              const c = bucket(id);
              if (c > 0) {
                live.push([id, c]);
                newest = id;
              }
            }
        } else
          for (const [name, value] of hash) {
            const m = /^(.*):(\d+)$/.exec(name);
            if (m === null || m[1] !== field) continue;
            const id = Number(m[2]);
            if (id < oldest) stale.push(name);
            else {
              live.push([id, Number(value)]);
              used += Number(value);
              newest = Math.max(newest, id);
              if (id === current) inCurrent = Number(value);
            }
          }
        const resetBefore = newest >= 0 ? (newest + count) * bucketMs - nowMs : 0;
        if (used + cost > limit) {
          if (denied === 0) denied = i;
          const wait = cost <= limit ? rollingWait(live, used + cost - limit, count, bucketMs, nowMs) : -1;
          values.push([used, used + cost, wait, resetBefore, resetBefore]);
        } else {
          writes.push([`${field}:${current}`, String(inCurrent + cost)], [field, `${oldest}${String(used + cost).padStart(9, '0')}`]);
          const end = (Math.max(newest, current) + count) * bucketMs;
          expireAt = Math.max(expireAt, end);
          values.push([used, used + cost, 0, resetBefore, end - nowMs]);
        }
      }
    }
    const reply: number[] = [denied];
    for (const v of values) {
      reply.push(denied > 0 ? (v[0] as number) : (v[1] as number));
      if (v.length > 2) reply.push(v[2] as number, denied > 0 ? (v[3] as number) : (v[4] as number));
    }
    if (denied > 0) return reply;
    for (const name of stale) hash.delete(name);
    for (const [field, value] of writes) hash.set(field, value);
    this.set(key, hash, Math.max(entry ? entry.expiresAt : 0, expireAt + 1));
    return reply;
  }

  private log(keys: readonly string[], args: readonly (string | number)[]): Reply {
    const n = keys.length;
    const cost = Number(args[2 * n]) || 1;
    const now = nowUs();
    const logs: number[][] = [];
    let remaining = Infinity;
    let retry = 0;
    let deniedBy = 0;
    for (let i = 0; i < n; i++) {
      const limit = Number(args[2 * i]);
      const window = Number(args[2 * i + 1]) * 1000;
      const entry = this.get(keys[i] ?? '', now / 1000);
      const live = (Array.isArray(entry?.value) ? entry.value : []).filter((t) => t > now - window);
      logs.push(live);
      remaining = Math.min(remaining, limit - live.length);
      if (live.length + cost > limit) {
        let wait = -1;
        if (cost <= limit) wait = Math.ceil(((live[live.length + cost - limit - 1] ?? now) + window - now) / 1000);
        if (deniedBy === 0 || (retry !== -1 && (wait === -1 || wait > retry))) {
          retry = wait;
          deniedBy = i + 1;
        }
      }
    }
    remaining = Math.max(0, remaining);
    if (deniedBy > 0) {
      let reset = 0;
      logs.forEach((live, i) => {
        const newest = live[live.length - 1];
        if (newest !== undefined) reset = Math.max(reset, Math.ceil((newest + Number(args[2 * i + 1]) * 1000 - now) / 1000));
      });
      return [0, remaining, retry, reset, deniedBy];
    }
    let windowMax = 0;
    logs.forEach((live, i) => {
      const windowMs = Number(args[2 * i + 1]);
      for (let c = 0; c < cost; c++) live.push(now);
      this.set(keys[i] ?? '', live, now / 1000 + windowMs);
      windowMax = Math.max(windowMax, windowMs);
    });
    return [1, remaining - cost, 0, windowMax, 0];
  }

  private window(key: string, args: readonly (string | number)[]): Reply {
    const limit = Number(args[1]);
    const cost = Number(args[2]) || 1;
    const now = Math.floor(nowUs() / 1000);
    if (args[0] === 'calendar') {
      const end = Number(args[3]);
      const slack = Number(args[4] ?? 60000);
      const reset = Math.max(0, end - now);
      const entry = this.get(key, now);
      const used = typeof entry?.value === 'number' ? entry.value : 0;
      if (used + cost > limit) return [0, Math.max(0, limit - used), cost <= limit ? Math.max(1, reset) : -1, reset];
      this.set(key, used + cost, entry ? entry.expiresAt : Math.max(end, now) + slack);
      return [1, limit - used - cost, 0, reset];
    }
    const windowMs = Number(args[3]);
    const bucketMs = Number(args[4]);
    const buckets = Math.floor(windowMs / bucketMs);
    const current = Math.floor(now / bucketMs);
    const oldest = current - buckets + 1;
    const entry = this.get(key, now);
    const counts = entry?.value instanceof Map ? (entry.value as Map<number, number>) : new Map<number, number>();
    let used = 0;
    let newest = -1;
    const live: [number, number][] = [];
    for (const [id, count] of counts) {
      if (id < oldest) counts.delete(id);
      else {
        used += count;
        live.push([id, count]);
        newest = Math.max(newest, id);
      }
    }
    const reset = newest >= 0 ? (newest + buckets) * bucketMs - now : 0;
    if (used + cost > limit) {
      const retry = cost <= limit ? rollingWait(live, used + cost - limit, buckets, bucketMs, now) : -1;
      return [0, Math.max(0, limit - used), retry, reset];
    }
    counts.set(current, (counts.get(current) ?? 0) + cost);
    const expireAt = (current + buckets) * bucketMs;
    this.set(key, counts, expireAt);
    return [1, limit - used - cost, 0, expireAt - now];
  }

  clear(): void {
    this.data.clear();
  }
}
