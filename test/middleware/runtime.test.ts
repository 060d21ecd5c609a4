/**
 * The runtime's building blocks, imported directly from src/runtime (the files generation
 * copies verbatim, so this is what users run, and coverage of the runtime counts it): IP and CIDR
 * parsing, the trusted-hop walk, IPv6 /64 keying, path normalisation, key escaping, calendar
 * periods across DST, route precedence with weighted costs, and the in-process twin of every
 * script (designs whose store is none), no Redis needed.
 */
import { readFileSync } from 'node:fs';
import { Registry } from 'prom-client';
import { beforeAll, describe, expect, it } from 'vitest';
import { exampleAnswers } from '../helpers/examples.js';
import { generateCode } from '../../src/codegen/index.js';
import { compileDesign, designData } from '../../src/codegen/middleware/index.js';
import type { Design } from '../../src/design/model.js';
import { calendarPeriod } from '../../src/runtime/middleware/calendar.js';
import { clientOfRequest, formatIp, inCidr, parseCidr, parseIp, resolveClientIp } from '../../src/runtime/middleware/client-ip.js';
import { keyPart, usernameKey } from '../../src/runtime/middleware/keys.js';
import { createLimiter } from '../../src/runtime/middleware/limiter.js';
import { pathSegments } from '../../src/runtime/middleware/routes.js';
import { charCodeAt } from '../../src/runtime/middleware/strings.js';
import { designFrom } from './harness.js';
import { IN_PROCESS, MAIN, PLANS } from './designs.js';
import { calendarDayFor, calendarPeriodFor } from './period.js';

interface Decision {
  status: number;
  headers: [string, string][];
  body: string | null;
  ruleId: string | null;
  exempt: boolean;
  outcomes: { ruleId: string; allowed: boolean; remaining: number; source: string }[];
}
interface Limiter {
  check(input: {
    method: string;
    url: string;
    remoteAddress: string | undefined;
    forwardedFor: string | string[] | undefined;
    req: unknown;
  }): Promise<Decision>;
  decide(input: Parameters<Limiter['check']>[0], sink: { decided(d: Decision): void; failed(e: unknown): void }): void;
  close(): void;
}
interface Core {
  parseIp(s: string): Uint8Array | null;
  parseCidr(s: string): { bytes: Uint8Array; bits: number };
  inCidr(ip: Uint8Array, c: { bytes: Uint8Array; bits: number }): boolean;
  formatIp(ip: Uint8Array, prefix?: number): string;
  resolveClientIp(remote: string | undefined, xff: string | string[] | undefined, trusted: unknown[], v6?: number): string;
  pathSegments(url: string): string[];
  keyPart(v: string): string;
  usernameKey(v: string): string;
  calendarPeriod(ms: number, period: 'day' | 'month', tz: string): { id: string; start: number; end: number };
  createLimiter(options: Record<string, unknown>): Limiter;
}

let core: Core;
const cores: Record<string, Core> = {};

const saasInProcess = designFrom({
  ...exampleAnswers('saas-platform'),
  stack: { ...exampleAnswers('saas-platform').stack, store: 'none', gateway: 'none', topology: 'single' },
});

/** The runtime's functions, with createLimiter bound to a design's data (as design.ts binds it). */
function coreOf(design: Design): Core {
  const data = designData(compileDesign(design));
  return {
    parseIp,
    parseCidr,
    inCidr,
    formatIp,
    resolveClientIp: resolveClientIp as Core['resolveClientIp'],
    pathSegments,
    keyPart,
    usernameKey,
    calendarPeriod,
    createLimiter: (options) => createLimiter(data, options) as unknown as Limiter,
  };
}

beforeAll(() => {
  const designs: Record<string, Design> = {
    main: designFrom(MAIN),
    inproc: designFrom(IN_PROCESS),
    saas: saasInProcess,
    plans: designFrom({ ...PLANS, stack: { ...PLANS.stack, store: 'none', topology: 'single' } }),
    window: designFrom({
      project: { name: 'fixed window' },
      stack: { framework: 'express', topology: 'single', gateway: 'nginx', store: 'none' },
      identities: ['ip'],
      endpoints: [{ name: 'ping', method: 'GET', route: '/ping', class: 'read', anonymous: true }],
      rules: [
        {
          id: 'ping-window',
          endpoints: ['ping'],
          identity: 'ip',
          algorithm: 'fixed-window',
          key: 'rl:{ip:<client-ip>}:ping',
          rate: { requests: 3, per: 'minute' },
          failMode: 'open',
          layer: 'middleware',
        },
      ],
    }),
  };
  for (const [name, design] of Object.entries(designs)) cores[name] = coreOf(design);
  core = cores.main as Core;
});

const input = (method: string, url: string, req: unknown = { headers: {} }, remoteAddress = '192.0.2.10', forwardedFor?: string) => ({
  method,
  url,
  remoteAddress,
  forwardedFor,
  req,
});

describe('charCodeAt (strings.ts)', () => {
  it('reads what String.prototype.charCodeAt reads: flat, concatenated and two-byte text, NaN past the end', () => {
    const number = String(500);
    // a concatenation V8 keeps as two parts until read
    const joined = '/v1/items/' + number + '?q=ü€';
    for (const text of [joined, 'GET', '/v1/Items/%7B', '', 'ключ-42']) {
      for (let i = -1; i <= text.length; i++) expect(Object.is(charCodeAt(text, i), text.charCodeAt(i))).toBe(true);
    }
    expect(charCodeAt('abc', 3)).toBeNaN();
  });
});

describe('IP addresses', () => {
  it("keeps the trusted-hop walk's answers by peer and X-Forwarded-For, and they stay right as the kept answers turn over", () => {
    const trusted = ['10.0.0.0/8'].map(parseCidr);
    const clientOf = clientOfRequest<unknown>(trusted, 64, undefined);
    const ask = (remoteAddress: string | undefined, forwardedFor?: string | string[]) =>
      clientOf({ input: { method: 'GET', url: '/', remoteAddress, forwardedFor, req: {} }, client: null }).key;
    const cases: [string | undefined, string | string[] | undefined, string][] = [
      ['10.0.0.1', '198.51.100.7', '198.51.100.7'],
      // the same header from a peer that is no proxy of ours: the peer is the client
      ['192.0.2.10', '198.51.100.7', '192.0.2.10'],
      ['10.0.0.1', '198.51.100.7, 10.0.0.2', '198.51.100.7'],
      ['10.0.0.1', ['198.51.100.8', '10.0.0.2'], '198.51.100.8'],
      ['10.0.0.1', undefined, '10.0.0.1'],
      [undefined, '198.51.100.7', 'unknown'],
      ['2001:db8:1:2::5', undefined, '2001:db8:1:2::/64'],
    ];
    // three times over, and again after more distinct callers than are kept
    for (let round = 0; round < 3; round++) for (const [peer, xff, key] of cases) expect(ask(peer, xff), `${peer} ${xff}`).toBe(key);
    for (let i = 0; i < 10_050; i++) expect(ask('10.0.0.1', `203.0.${i >> 8}.${i & 255}`)).toBe(`203.0.${i >> 8}.${i & 255}`);
    for (const [peer, xff, key] of cases) expect(ask(peer, xff), `${peer} ${xff}`).toBe(key);
    // a header too long to keep is walked every time
    const long = `${Array.from({ length: 40 }, (_, i) => `198.51.100.${i}`).join(', ')}, 10.0.0.3`;
    expect(ask('10.0.0.1', long)).toBe('198.51.100.39');
    expect(ask('10.0.0.1', long)).toBe('198.51.100.39');
  });

  it('parses the forms sockets and proxies write, and refuses the rest', () => {
    const ok: [string, number[]][] = [
      ['203.0.113.5', [203, 0, 113, 5]],
      ['203.0.113.5:8080', [203, 0, 113, 5]],
      ['::ffff:10.1.2.3', [10, 1, 2, 3]],
      ['::ffff:a01:203', [10, 1, 2, 3]],
      [' 0.0.0.0 ', [0, 0, 0, 0]],
    ];
    for (const [text, bytes] of ok) expect([...(core.parseIp(text) ?? [])], text).toEqual(bytes);
    expect(core.formatIp(core.parseIp('[2001:db8::1]:443') as Uint8Array)).toBe('2001:db8::1');
    expect(core.formatIp(core.parseIp('fe80::1%eth0') as Uint8Array)).toBe('fe80::1');
    expect(core.formatIp(core.parseIp('2001:0DB8:0:0:1:0:0:1') as Uint8Array)).toBe('2001:db8::1:0:0:1');
    expect(core.formatIp(core.parseIp('1::') as Uint8Array)).toBe('1::');
    expect(core.formatIp(core.parseIp('::') as Uint8Array)).toBe('::');
    for (const bad of [
      '',
      '1.2.3',
      '1.2.3.4.5',
      '01.2.3.4',
      '256.1.1.1',
      '1::2::3',
      'gggg::1',
      '1:2:3:4:5:6:7:8:9',
      ':1',
      'unknown',
      '1.2.3.4/8',
      '::ffff:1.2.3',
    ]) {
      expect(core.parseIp(bad), bad).toBeNull();
    }
  });

  it('matches IPv4 and IPv6 CIDRs bit-exactly, IPv4-mapped ranges included', () => {
    const cases: [string, string, boolean][] = [
      ['10.0.0.0/8', '10.255.1.1', true],
      ['10.0.0.0/8', '11.0.0.1', false],
      ['10.20.0.0/16', '10.20.255.255', true],
      ['10.20.0.0/16', '10.21.0.0', false],
      ['192.168.1.128/25', '192.168.1.127', false],
      ['192.168.1.128/25', '192.168.1.200', true],
      ['0.0.0.0/0', '8.8.8.8', true],
      ['0.0.0.0/0', '::1', false],
      ['127.0.0.1', '127.0.0.1', true],
      ['127.0.0.1', '127.0.0.2', false],
      ['::1/128', '::1', true],
      ['fd00::/8', 'fd12:3456::1', true],
      ['fd00::/8', 'fe00::1', false],
      ['2001:db8::/33', '2001:db8:7fff::1', true],
      ['2001:db8::/33', '2001:db8:8000::1', false],
      ['::ffff:10.0.0.0/104', '10.9.9.9', true],
      ['10.0.0.0/8', '::ffff:10.9.9.9', true],
    ];
    for (const [cidr, ip, want] of cases) {
      expect(core.inCidr(core.parseIp(ip) as Uint8Array, core.parseCidr(cidr)), `${ip} in ${cidr}`).toBe(want);
    }
    for (const bad of ['abc', '10.0.0.0/33', '::/129', '10.0.0.0/-1', '10.0.0.0/']) expect(() => core.parseCidr(bad), bad).toThrow();
  });

  it('walks X-Forwarded-For from the right, only when the peer is trusted', () => {
    const trusted = ['10.0.0.0/8', 'fd00::/8'].map((c) => core.parseCidr(c));
    const ip = (remote: string | undefined, xff?: string | string[]) => core.resolveClientIp(remote, xff, trusted);
    expect(ip('198.51.100.1', '1.2.3.4')).toBe('198.51.100.1');
    expect(ip('10.0.0.5', '1.2.3.4, 203.0.113.7, 10.0.0.9')).toBe('203.0.113.7');
    expect(ip('10.0.0.5', undefined)).toBe('10.0.0.5');
    expect(ip('10.0.0.5', '10.1.1.1, 10.2.2.2')).toBe('10.1.1.1');
    expect(ip('10.0.0.5', 'garbage, 203.0.113.7')).toBe('203.0.113.7');
    expect(ip('10.0.0.5', '203.0.113.7, garbage')).toBe('10.0.0.5');
    expect(ip('10.0.0.5', ['1.1.1.1', '203.0.113.8'])).toBe('203.0.113.8');
    expect(ip('::ffff:10.0.0.5', '203.0.113.9')).toBe('203.0.113.9');
    expect(ip('fd00::2', '2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(ip(undefined, '1.2.3.4')).toBe('unknown');
    // rotating the client-written part never changes the answer
    const seen = new Set(Array.from({ length: 20 }, (_, i) => ip('10.0.0.5', `${i}.${i}.${i}.${i}, 10.3.3.3, 198.51.100.4, 10.0.0.7`)));
    expect([...seen]).toEqual(['198.51.100.4']);
    // one IPv6 customer network is one key; the full address with /128
    expect(ip('2001:db8:1:2::1')).toBe(ip('2001:db8:1:2:ffff::9'));
    expect(core.resolveClientIp('2001:db8::1', undefined, trusted, 128)).toBe('2001:db8::1');
  });
});

describe('paths, keys and periods', () => {
  it('normalises paths so a spelling can not dodge a limit', () => {
    expect(core.pathSegments('/V1/Items/%34%32?x=1#f')).toEqual(['v1', 'items', '42']);
    expect(core.pathSegments('//v1//items/')).toEqual(['v1', 'items']);
    expect(core.pathSegments('http://host:8080/v1/x?y')).toEqual(['v1', 'x']);
    expect(core.pathSegments('/a/%E0%A4%A')).toEqual(['a', '%e0%a4%a']);
  });

  it('escapes identity values in keys and hashes usernames after normalising them', () => {
    expect(core.keyPart('acme')).toBe('acme');
    expect(core.keyPart('a}b{c d%~')).toBe('a%7db%7bc%20d%25%7e');
    expect(core.keyPart('x'.repeat(200))).toMatch(/^~[0-9a-f]{64}$/);
    expect(core.usernameKey(' Alice@Example.COM ')).toBe(core.usernameKey('alice@example.com'));
    expect(core.usernameKey('ｂｏｂ')).toBe(core.usernameKey('bob'));
    expect(core.usernameKey('alice')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('computes calendar months and days in the plan time zone, across DST changes', () => {
    const berlinMarch = core.calendarPeriod(Date.UTC(2026, 2, 15, 12), 'month', 'Europe/Berlin');
    expect(berlinMarch).toEqual({ id: '2026-03', start: Date.UTC(2026, 1, 28, 23), end: Date.UTC(2026, 2, 31, 22) });
    const berlinOct = core.calendarPeriod(Date.UTC(2026, 9, 31, 22, 59, 59), 'month', 'Europe/Berlin');
    expect(berlinOct).toEqual({ id: '2026-10', start: Date.UTC(2026, 8, 30, 22), end: Date.UTC(2026, 9, 31, 23) });
    expect(core.calendarPeriod(Date.UTC(2026, 9, 31, 23), 'month', 'Europe/Berlin').id).toBe('2026-11');
    const dec = core.calendarPeriod(Date.UTC(2026, 11, 31, 23, 30), 'month', 'Europe/Berlin');
    expect(dec.id).toBe('2027-01');
    // 8 March 2026 in New York is 23 hours long
    const springDay = core.calendarPeriod(Date.UTC(2026, 2, 8, 12), 'day', 'America/New_York');
    expect(springDay).toEqual({ id: '2026-03-08', start: Date.UTC(2026, 2, 8, 5), end: Date.UTC(2026, 2, 9, 4) });
    expect(core.calendarPeriod(Date.UTC(2026, 0, 1), 'day', 'UTC')).toEqual({
      id: '2026-01-01',
      start: Date.UTC(2026, 0, 1),
      end: Date.UTC(2026, 0, 2),
    });
    // agree with an independent bisection over many instants and odd zones
    for (const tz of ['Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Pacific/Chatham', 'Australia/Lord_Howe', 'America/Santiago']) {
      for (let i = 0; i < 40; i++) {
        const t = Date.UTC(2025, 0, 1) + i * 9.7 * 86_400_000;
        const got = core.calendarPeriod(t, 'month', tz);
        const want = calendarPeriodFor(t, tz);
        expect(got.id, `${tz} ${new Date(t).toISOString()}`).toBe(want.id);
        expect(got.end, `${tz} ${new Date(t).toISOString()}`).toBe(want.end);
        expect(got.start).toBeLessThanOrEqual(t);
      }
    }
  });

  it('starts a day whose midnight the clocks skip when the clocks jump, so the period holds the moment asked about', () => {
    // America/Santiago springs forward at 00:00 on 6 September 2026 (to 01:00), America/Havana on 8 March 2026
    const santiago = core.calendarPeriod(Date.UTC(2026, 8, 6, 12), 'day', 'America/Santiago');
    expect(santiago).toEqual({ id: '2026-09-06', start: Date.UTC(2026, 8, 6, 4), end: Date.UTC(2026, 8, 7, 3) });
    // 23:30 on the 5th: the day before, whose end is the jump, not an hour before it
    const late = Date.UTC(2026, 8, 6, 3, 30);
    const before = core.calendarPeriod(late, 'day', 'America/Santiago');
    expect(before).toEqual({ id: '2026-09-05', start: Date.UTC(2026, 8, 5, 4), end: Date.UTC(2026, 8, 6, 4) });
    expect(core.calendarPeriod(Date.UTC(2026, 2, 8, 12), 'day', 'America/Havana').start).toBe(Date.UTC(2026, 2, 8, 5));
    // agree with an independent bisection, hour by hour around the jumps, in zones that skip midnight and others
    const around: [string, number][] = [
      ['America/Santiago', Date.UTC(2026, 8, 5, 12)],
      ['America/Santiago', Date.UTC(2026, 3, 4, 12)],
      ['America/Havana', Date.UTC(2026, 2, 7, 12)],
      ['America/Havana', Date.UTC(2026, 10, 0, 12)],
      ['America/Asuncion', Date.UTC(2024, 9, 5, 12)],
      ['Asia/Kolkata', Date.UTC(2026, 11, 31, 12)],
      ['America/New_York', Date.UTC(2026, 2, 7, 12)],
      ['Europe/London', Date.UTC(2026, 9, 24, 12)],
    ];
    for (const [tz, from] of around) {
      for (let h = 0; h < 48; h++) {
        const t = from + h * 3_600_000 + 1_800_000;
        const got = core.calendarPeriod(t, 'day', tz);
        const want = calendarDayFor(t, tz);
        const at = `${tz} ${new Date(t).toISOString()}`;
        expect(got, at).toEqual(want);
        expect(got.start <= t && t < got.end, at).toBe(true);
      }
    }
    // the runtime the generated code ships is this one
    const shipped = generateCode(designFrom(exampleAnswers('saas-platform'))).find((f) => f.path === 'middleware/calendar.ts')!.content;
    expect(shipped).toContain('return f[2] === day ? at : guess - zoneOffsetMs(at, timeZone);');
  });
});

describe('the limiter without a shared store (in-process twin of each script)', () => {
  it('refuses to start without Redis when a rule keeps its state there, or with a bad CIDR', () => {
    expect(() => core.createLimiter({ registry: null })).toThrow(/options\.redis/);
    expect(() => (cores.inproc as Core).createLimiter({ registry: null, trustedProxies: ['10.0.0.0/40'] })).toThrow(/prefix length/);
  });

  it('burst boundary, weighted cost, path spellings, exemptions and the trio headers', async () => {
    const limiter = (cores.inproc as Core).createLimiter({ registry: null, defaultMode: 'enforce', identify: () => ({ apiKey: 'k1' }) });
    const first = await limiter.check(input('POST', '/v1/exports'));
    expect(first.status).toBe(200);
    expect(first.headers).toEqual([
      ['RateLimit-Limit', '12'],
      ['RateLimit-Remaining', '7'],
      ['RateLimit-Reset', expect.stringMatching(/^\d+$/)],
    ]);
    const spellings = ['/V1/ITEMS', '/v1//items/', '/v1/items?x=1', '/v1/%69tems', '/v1/items/9', '/v1/items/9/', '/v1/items#x'];
    for (const url of spellings) expect((await limiter.check(input('GET', url))).status).toBe(200);
    const refused = await limiter.check(input('HEAD', '/v1/items'));
    expect(refused.status).toBe(429);
    expect(refused.ruleId).toBe('fairness-per-api-key');
    expect(refused.headers.find(([n]) => n === 'Retry-After')?.[1]).toMatch(/^\d+$/);
    expect(JSON.parse(refused.body ?? '{}')).toMatchObject({ code: 'RATE_LIMITED', limit: { rule: 'fairness-per-api-key', quota: 12 } });
    const health = await limiter.check(input('GET', '/healthz'));
    expect(health).toMatchObject({ status: 200, exempt: true, headers: [] });
    // routes the answers do not list still meet the protective ceiling (and only it), in every method
    const unknown = await limiter.check(input('GET', '/not/in/the/design'));
    expect(unknown).toMatchObject({ status: 200, exempt: false });
    expect(unknown.outcomes.map((o) => o.ruleId)).toEqual(['global-ceiling']);
    for (const [method, url] of [
      ['OPTIONS', '/v1/login'],
      ['DELETE', '/v1/items/1'],
      ['POST', '/healthz'],
      ['GET', '/'],
    ]) {
      expect(
        (await limiter.check(input(method!, url!))).outcomes.map((o) => o.ruleId),
        `${method} ${url}`,
      ).toEqual(['global-ceiling']);
    }
    expect(await limiter.check(input('GET', '/healthz/'))).toMatchObject({ exempt: true, outcomes: [] });
    limiter.close();
  });

  it('decide(): the decision check() gives, to the sink once; a sink that throws is not called again', async () => {
    const heard: string[] = [];
    const sink = (name: string, throwing = false) => ({
      decided(d: Decision) {
        heard.push(`${name}: decided ${d.status}${d.exempt ? ' exempt' : ''}`);
        if (throwing) throw new Error('the response was already sent');
      },
      failed(e: unknown) {
        heard.push(`${name}: failed ${(e as Error).message}`);
      },
    });
    const a = (cores.inproc as Core).createLimiter({ registry: null, defaultMode: 'enforce', identify: () => ({ apiKey: 'sink-a' }) });
    const b = (cores.inproc as Core).createLimiter({ registry: null, defaultMode: 'enforce', identify: () => ({ apiKey: 'sink-a' }) });
    // the same requests through check() and decide() on two limiters of the same design
    for (let i = 0; i < 7; i++) {
      const checked = await a.check(input('POST', '/v1/exports'));
      const decided = await new Promise<Decision>((resolve, reject) =>
        b.decide(input('POST', '/v1/exports'), { decided: resolve, failed: reject }),
      );
      // (times move between the two calls, and the ceiling refills in them: compared without
      // times or the ceiling's remaining; the refused rule's Remaining header stays)
      const timeless = (d: Decision) => ({
        status: d.status,
        ruleId: d.ruleId,
        headers: d.headers.map(([n, v]) => (n === 'RateLimit-Remaining' ? `${n}: ${v}` : n)),
        outcomes: d.outcomes.map((o) => `${o.ruleId} ${o.allowed}`),
      });
      expect(timeless(decided), `call ${i + 1}`).toEqual(timeless(checked));
    }
    expect(heard).toEqual([]);
    // in-process state answers at once: the sink hears it before decide() returns
    b.decide(input('GET', '/healthz'), sink('exempt'));
    b.decide(input('GET', '/v1/items'), sink('items'));
    expect(heard).toEqual(['exempt: decided 200 exempt', 'items: decided 200']);
    heard.length = 0;
    // a sink that throws (headers already sent) hears the decision once, and no failure after it
    expect(() => b.decide(input('GET', '/v1/items'), sink('throws', true))).toThrow('already sent');
    expect(() => b.decide(input('GET', '/healthz'), sink('exempt throws', true))).toThrow('already sent');
    // identify() that throws: the sink hears the failure once
    const failing = (cores.inproc as Core).createLimiter({
      registry: null,
      defaultMode: 'enforce',
      identify: () => {
        throw new Error('no session store');
      },
    });
    failing.decide(input('GET', '/v1/items'), sink('identify'));
    await new Promise((r) => setTimeout(r, 10));
    expect(heard).toEqual(['throws: decided 200', 'exempt throws: decided 200 exempt', 'identify: failed no session store']);
    for (const l of [a, b, failing]) l.close();
  });

  it('two limiters of different designs in one process each decide by their own design', async () => {
    // the evaluation classes are shared by every limiter (evaluation.ts): what differs comes from
    // each limiter's context, so interleaved requests must never read the other one's rules
    const items = (cores.inproc as Core).createLimiter({ registry: null, defaultMode: 'enforce', identify: () => ({ apiKey: 'k2' }) });
    const ping = (cores.window as Core).createLimiter({ registry: null, defaultMode: 'enforce' });
    const pings: number[] = [];
    for (let i = 0; i < 4; i++) {
      const exported = await items.check(input('POST', '/v1/exports'));
      expect(exported.outcomes.map((o) => o.ruleId)).not.toContain('ping-window');
      const p = await ping.check(input('GET', '/ping'));
      expect(p.outcomes.map((o) => o.ruleId)).toEqual(['ping-window']);
      pings.push(p.status);
    }
    expect(pings).toEqual([200, 200, 200, 429]);
    const refused = await ping.check(input('GET', '/ping'));
    expect(JSON.parse(refused.body ?? '{}')).toMatchObject({ limit: { rule: 'ping-window', quota: 3 } });
    expect(refused.headers.find(([n]) => n === 'Retry-After')?.[1]).toMatch(/^\d+$/);
    items.close();
    ping.close();
  });

  it('createLimiter declares no class of its own (one shape per concept in a process)', () => {
    const source = readFileSync(new URL('../../src/runtime/middleware/limiter.ts', import.meta.url), 'utf8');
    const body = source.slice(source.indexOf('export function createLimiter'));
    expect(body).not.toMatch(/^\s+class\s/m);
  });

  it('dual-key auth in one call, all-or-nothing across the two logs', async () => {
    const limiter = (cores.inproc as Core).createLimiter({ registry: null, defaultMode: 'enforce', trustedProxies: [] });
    const login = (user: string, ip: string) => limiter.check(input('POST', '/v1/login', { body: { username: user } }, ip));
    const byUser = [];
    for (let i = 1; i <= 4; i++) byUser.push((await login('dave', `198.51.100.${i}`)).status);
    expect(byUser).toEqual([200, 200, 200, 429]);
    const byIp = [];
    for (let i = 1; i <= 6; i++) byIp.push((await login(`erin${i}`, '203.0.113.50')).status);
    expect(byIp).toEqual([200, 200, 200, 200, 200, 429]);
    const denied = await login('erin1', '203.0.113.50');
    expect(denied.outcomes.filter((o) => o.ruleId.startsWith('auth-login'))).toHaveLength(2);
    // no username: the IP row alone still applies
    expect((await limiter.check(input('POST', '/v1/login', { body: {} }, '203.0.113.50'))).status).toBe(429);
    // silent: no counts anywhere
    expect(denied.headers.map(([n]) => n)).toEqual(['Retry-After']);
    limiter.close();
  });

  it('route precedence as a router sees it: /v1/orders/search is the search endpoint (cost 5), not /v1/orders/:id', async () => {
    const limiter = (cores.saas as Core).createLimiter({
      registry: null,
      defaultMode: 'enforce',
      hybrid: false,
      identify: () => ({ tenantId: 'acme', plan: 'Free' }),
      // the design takes the tenant from a function of the application's own
      identities: { tenant: () => 'acme' },
    });
    const search = await limiter.check(input('GET', '/v1/orders/search'));
    expect(search.outcomes.find((o) => o.ruleId === 'fairness-free')?.remaining).toBe(20);
    const byId = await limiter.check(input('GET', '/v1/orders/123'));
    expect(byId.outcomes.find((o) => o.ruleId === 'fairness-free')?.remaining).toBe(19);
    // ceiling first (no gateway here, so the middleware owns it); a plan rule only checks its
    // own plan; the plan's quota runs last
    expect(byId.outcomes.map((o) => o.ruleId)).toEqual(['global-ceiling', 'fairness-free', 'quota-free']);
    // the public catalog allows anonymous callers: a caller with a tenant is counted there by its
    // plan's rows too, one without any identity by the per-IP row alone
    const identified = await limiter.check(input('GET', '/v1/catalog'));
    expect(identified.outcomes.map((o) => o.ruleId).sort()).toEqual(['anonymous-per-ip', 'fairness-free', 'global-ceiling', 'quota-free']);
    expect(identified.outcomes.find((o) => o.ruleId === 'fairness-free')?.remaining).toBe(18);
    limiter.close();
    const nobody = (cores.saas as Core).createLimiter({
      registry: null,
      defaultMode: 'enforce',
      hybrid: false,
      identify: () => ({}),
      identities: { tenant: () => undefined },
    });
    const anonymous = await nobody.check(input('GET', '/v1/catalog'));
    expect(anonymous.outcomes.map((o) => o.ruleId)).toEqual(['global-ceiling', 'anonymous-per-ip']);
    nobody.close();
  });

  it('calendar quota in process: QUOTA_EXCEEDED after the plan quota, keyed per tenant', async () => {
    const limiter = (cores.plans as Core).createLimiter({
      registry: null,
      defaultMode: 'enforce',
      identify: (req: { t: string }) => ({ tenantId: req.t, plan: 'Free' }),
    });
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await limiter.check(input('GET', '/v1/orders', { t: 'a' }))).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    const refused = await limiter.check(input('GET', '/v1/orders', { t: 'a' }));
    expect(JSON.parse(refused.body ?? '{}')).toMatchObject({ code: 'QUOTA_EXCEEDED', 'violated-policies': ['quota-free'] });
    expect((await limiter.check(input('GET', '/v1/orders', { t: 'b' }))).status).toBe(200);
    limiter.close();
  });

  it('a plain fixed window: one counter per window, a new window starts a new counter', async () => {
    let now = Date.UTC(2026, 0, 1, 12, 0, 10);
    const limiter = (cores.window as Core).createLimiter({ registry: null, defaultMode: 'enforce', now: () => now });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await limiter.check(input('GET', '/ping'))).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    now += 60_000;
    expect((await limiter.check(input('GET', '/ping'))).status).toBe(200);
    limiter.close();
  });
});

describe('the store calls, against clients that answer as the test says (no Redis)', () => {
  /** A client whose calls wait until the test settles them, recording what was sent. */
  function scriptedClient(withBufferVariants = false) {
    const sent: { command: string; args: unknown[]; resolve: (v: unknown) => void; reject: (e: unknown) => void }[] = [];
    const command =
      (name: string) =>
      (...args: unknown[]) =>
        new Promise((resolve, reject) => {
          sent.push({ command: name, args, resolve, reject });
        });
    const client: Record<string, unknown> = { evalsha: command('evalsha'), eval: command('eval') };
    if (withBufferVariants) Object.assign(client, { evalshaBuffer: command('evalshaBuffer'), evalBuffer: command('evalBuffer') });
    return { client, sent };
  }
  /** Lets the limiter's callbacks run. */
  const settle = () => new Promise<void>((r) => setImmediate(r));
  const OK = [1, 11, 0, 5000];

  it("EVALSHA with every argument as a string, NOSCRIPT answered by EVAL of the same keys and arguments; ioredis's *Buffer variants when the client has them", async () => {
    for (const buffers of [false, true]) {
      const { client, sent } = scriptedClient(buffers);
      // (a timeout well past the test's own pace: both calls are pending while it answers them)
      const limiter = core.createLimiter({
        redis: client,
        registry: null,
        defaultMode: 'enforce',
        identify: () => ({ apiKey: 'k1' }),
        timeoutMs: 10_000,
      });
      const decision = limiter.check(input('GET', '/v1/items/7'));
      await settle();
      // the ceiling and the fairness rule key on different identities: both go out at once
      const sha = buffers ? 'evalshaBuffer' : 'evalsha';
      expect(sent.map((c) => c.command)).toEqual([sha, sha]);
      sent[0]?.reject(Object.assign(new Error('NOSCRIPT No matching script. Please use EVAL.'), { name: 'ReplyError' }));
      await settle();
      expect(sent[2]?.command).toBe(buffers ? 'evalBuffer' : 'eval');
      expect(sent[2]?.args.slice(1)).toEqual(sent[0]?.args.slice(1));
      expect(String(sent[2]?.args[0])).toContain('redis.call');
      sent[2]?.resolve(OK);
      await settle();
      const fairness = sent[1];
      // key, tolerance (burst 12 x T), increment (cost 1 x T), interval T = 60 s, in microseconds
      expect(fairness?.args.slice(1)).toEqual([1, 'rl:{ak:k1}:req', '720000000', '60000000', '60000000']);
      fairness?.resolve(OK);
      const d = await decision;
      expect(d.status).toBe(200);
      expect(d.outcomes.map((o) => [o.ruleId, o.source])).toEqual([
        ['global-ceiling', 'store'],
        ['fairness-per-api-key', 'store'],
      ]);
      limiter.close();
    }
  });

  it('keys: the own identity, a fallback identity with its own label, a fixed key for a global rule', async () => {
    const keys: string[] = [];
    const client = {
      evalsha: (_sha: string, n: number, ...rest: unknown[]) => {
        keys.push(...(rest.slice(0, n) as string[]));
        return Promise.resolve(OK);
      },
      eval: () => Promise.resolve(OK),
    };
    let identity: Record<string, string> = { apiKey: 'a{b}c' };
    const limiter = core.createLimiter({ redis: client, registry: null, defaultMode: 'enforce', identify: () => identity });
    await limiter.check(input('GET', '/v1/items'));
    identity = { tenantId: 'acme' };
    await limiter.check(input('GET', '/v1/items'));
    identity = {};
    await limiter.check(input('GET', '/v1/items', { headers: {} }, '10.1.2.3', '198.51.100.9'));
    expect(keys).toEqual([
      'rl:{global}:ceiling',
      'rl:{ak:a%7bb%7dc}:req',
      'rl:{global}:ceiling',
      'rl:{ak~t:acme}:req',
      'rl:{global}:ceiling',
      // 10.1.2.3 is no trusted proxy here (the design trusts loopback only): the peer is the client
      'rl:{ak~ip:10.1.2.3}:req',
    ]);
    limiter.close();
  });

  it('a client that throws, rejects or answers nonsense: each rule gets its fail mode, and each failure is reported once', async () => {
    const replies: [string, (args: unknown[]) => Promise<unknown>][] = [
      [
        'throws',
        () => {
          throw new Error('socket closed');
        },
      ],
      ['rejects', () => Promise.reject(new Error('Connection is closed.'))],
      ['answers nonsense', () => Promise.resolve('OK')],
    ];
    for (const [label, answer] of replies) {
      const reported: string[] = [];
      const limiter = core.createLimiter({
        redis: { evalsha: (...a: unknown[]) => answer(a), eval: (...a: unknown[]) => answer(a) },
        registry: null,
        defaultMode: 'enforce',
        identify: () => ({ apiKey: 'k1' }),
        onStoreError: (_e: unknown, ids: readonly string[]) => reported.push(ids.join('+')),
      });
      const open = await limiter.check(input('GET', '/v1/items'));
      expect(open.status, label).toBe(200);
      expect(
        open.outcomes.map((o) => o.source),
        label,
      ).toEqual(['store-failed', 'store-failed']);
      const closed = await limiter.check(input('POST', '/v1/login', { body: { username: 'u1' } }));
      expect(closed.status, label).toBe(503);
      expect(closed.ruleId, label).toMatch(/^auth-login-per-/);
      expect(closed.headers, label).toEqual([['Retry-After', expect.stringMatching(/^\d+$/)]]);
      await settle();
      expect(reported, label).toEqual([
        'global-ceiling',
        'fairness-per-api-key',
        'global-ceiling',
        'auth-login-per-identity+auth-login-per-ip',
      ]);
      limiter.close();
    }
  });

  it('a call past its timeout fails by its rule; the late reply changes nothing', async () => {
    const { client, sent } = scriptedClient();
    const registry = new Registry();
    const reported: string[] = [];
    const limiter = core.createLimiter({
      redis: client,
      registry,
      defaultMode: 'enforce',
      timeoutMs: 20,
      identify: () => ({ apiKey: 'k1' }),
      onStoreError: (e: unknown, ids: readonly string[]) => reported.push(`${(e as Error).name}:${ids.join('+')}`),
    });
    // nothing answers: both rules time out, one after the other, and fail open
    const decision = await limiter.check(input('GET', '/v1/items'));
    expect(decision.status).toBe(200);
    expect(decision.outcomes.map((o) => o.source)).toEqual(['store-failed', 'store-failed']);
    expect(reported).toEqual(['StoreError:global-ceiling', 'StoreError:fairness-per-api-key']);
    // the replies come in late
    for (const call of sent) call.resolve(OK);
    await settle();
    expect(reported).toHaveLength(2);
    const text = await registry.metrics();
    expect(text).toContain('ratelimit_store_failures_total{rule="global-ceiling",reason="timeout"} 1');
    expect(text).toContain('ratelimit_fail_open_events_total{rule="fairness-per-api-key"} 1');
    expect(text).toContain('ratelimit_store_latency_ms_count{script="gcra"} 2');
    limiter.close();
  });

  it('metrics: decision counters and the store-latency histogram in prom-client, shared by the limiters on one registry', async () => {
    const registry = new Registry();
    const client = { evalsha: () => Promise.resolve(OK), eval: () => Promise.resolve(OK) };
    const options = { redis: client, registry, defaultMode: 'enforce', identify: () => ({ apiKey: 'k1' }) };
    const a = core.createLimiter(options);
    const b = core.createLimiter(options);
    for (let i = 0; i < 5; i++) expect((await a.check(input('GET', '/v1/items'))).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await b.check(input('GET', '/v1/items/1'))).status).toBe(200);
    const text = await registry.metrics();
    expect(text).toContain('# TYPE ratelimit_store_latency_ms histogram');
    // two gcra calls per request (ceiling, fairness), from both limiters
    expect(text).toContain('ratelimit_store_latency_ms_count{script="gcra"} 16');
    expect(text).toContain('ratelimit_store_latency_ms_bucket{le="+Inf",script="gcra"} 16');
    const buckets = [...text.matchAll(/ratelimit_store_latency_ms_bucket\{le="([^"]+)",script="gcra"\} (\d+)/g)].map(
      (m) => [m[1], Number(m[2])] as const,
    );
    expect(buckets.map(([le]) => le)).toEqual(['0.25', '0.5', '1', '2', '5', '10', '25', '50', '100', '+Inf']);
    const counts = buckets.map(([, n]) => n);
    expect(counts).toEqual([...counts].sort((x, y) => x - y));
    expect(Number(/ratelimit_store_latency_ms_sum\{script="gcra"\} ([\d.e+-]+)/.exec(text)?.[1])).toBeGreaterThanOrEqual(0);
    expect(text).toContain('ratelimit_decisions_total{rule="fairness-per-api-key",result="allowed"} 8');
    expect(text).toContain('ratelimit_decisions_total{rule="global-ceiling",result="allowed"} 8');
    // counted once: collecting again adds nothing
    expect(await registry.metrics()).toContain('ratelimit_decisions_total{rule="fairness-per-api-key",result="allowed"} 8');
    registry.resetMetrics();
    expect(await registry.metrics()).not.toContain('ratelimit_store_latency_ms_count');
    a.close();
    b.close();
  });
});
