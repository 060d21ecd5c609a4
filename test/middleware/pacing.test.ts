/**
 * Headers a client can trust: for every client-facing rule of every example, a client that
 * paces itself by what the responses advertise is never refused, over real HTTP (the shipped
 * Express adapter and runtime, compiled under --strict) against a real Redis.
 *
 * Each rule runs alone, with its numbers scaled so that one policy window lasts a second or two
 * (the algorithm, identity, plan, convention, soft-quota backstop and the burst-to-rate shape of
 * the rule are kept; a calendar quota becomes a fixed window of the same limit). Two clients:
 *   - the even client reads q and w (structured fields: RateLimit-Policy; the single-value
 *     conventions: the Limit header, and the rule's window) and spaces its calls w / q apart,
 *     starting, for a window rule, where the advertised reset says the next window begins;
 *   - the draining client spends what RateLimit says remains, then sleeps the reset it was
 *     given, twice over.
 * And the advertised rate, q / w, is the rule's own rate (the real numbers are checked in
 * test/design/contract.test.ts for every rule of every example).
 */
import type { AddressInfo } from 'node:net';
import express from 'express';
import { Registry } from 'prom-client';
import { beforeAll, describe, expect, it } from 'vitest';
import { compileDesign, designData, generateExpressMiddleware, DESIGN_DATA_PATH } from '../../src/codegen/middleware/index.js';
import type { CodeFile } from '../../src/codegen/types.js';
import { policyOf, statedLimit } from '../../src/runtime/middleware/responses.js';
import type { DesignData, RuleSpec } from '../../src/runtime/middleware/types.js';
import { exampleDesign, exampleNames } from '../helpers/examples.js';
import { useRedisServer } from '../helpers/redis.js';
import { freshPrefix, sleep, useCompiledMiddleware } from './harness.js';

interface Case {
  name: string;
  example: string;
  data: DesignData;
  rule: RuleSpec;
  path: string;
  method: string;
}

/** The rule's shape at a scale where one policy window lasts about a second. */
function scaled(rule: RuleSpec): RuleSpec {
  if (rule.burst === null) {
    const limit = Math.min(rule.limit, 8);
    const quota = rule.quota === null ? null : Math.max(1, Math.floor((limit * rule.quota) / rule.limit));
    return { ...rule, limit, periodSeconds: 1, window: rule.window === 'rolling' ? 'rolling' : 'fixed', quota };
  }
  // burst in units of one period's worth, kept; 8 per second
  const ratio = rule.burst / rule.limit;
  return { ...rule, limit: 8, periodSeconds: 1, burst: Math.max(1, Math.min(12, Math.round(8 * ratio))), hybrid: false };
}

function casesOf(example: string): Case[] {
  const design = exampleDesign(example);
  const data = designData(compileDesign(design));
  return data.rules
    .filter((r) => r.headers === 'full' && r.window !== 'rolling')
    .map((r) => {
      const route = data.routes[r.routes[0] ?? -1];
      const path = (route?.route ?? '/x').replace('/*', '/anything').replace(/:[^/]+/g, '1');
      return {
        name: `${example}: ${r.id}`,
        example,
        data: { ...data, defaultMode: 'enforce', hybrid: null, quotaPeriod: null, rules: [scaled(r)] },
        rule: scaled(r),
        path,
        method: route?.method === 'ANY' || route?.method === undefined ? 'GET' : route.method,
      };
    });
}

const CASES = exampleNames().flatMap(casesOf);

const store = useRedisServer();
const mods = new Map<string, { rateLimit: (o: unknown) => express.RequestHandler & { limiter: { close(): void } } }>();

function setName(c: Case): string {
  return `${c.example}-${c.rule.id}`.replace(/[^a-z0-9-]/gi, '_');
}

/** Each case's Express middleware, with the case's design data. */
function caseSets(): Record<string, CodeFile[]> {
  const sets: Record<string, CodeFile[]> = {};
  for (const c of CASES) {
    const files = generateExpressMiddleware(exampleDesign(c.example)).map((f) =>
      f.path === DESIGN_DATA_PATH
        ? {
            ...f,
            content: `import type { DesignData } from './types.js';\n\nexport const DESIGN: DesignData = ${JSON.stringify(c.data, null, 2)};\n`,
          }
        : f,
    );
    sets[setName(c)] = files;
  }
  return sets;
}
const scratch = useCompiledMiddleware(caseSets, 180_000);

beforeAll(async () => {
  for (const c of CASES) mods.set(c.name, await scratch.load(setName(c), 'express'));
});

async function serve(c: Case): Promise<{ url: string; close(): Promise<void> }> {
  const app = express();
  const mw = mods.get(c.name)?.rateLimit({
    redis: store.redis,
    keyPrefix: freshPrefix('pace'),
    registry: new Registry(),
    timeoutMs: 2000,
    identify: () => ({ apiKey: 'k1', tenantId: 't1', userId: 'u1', sessionId: 's1', plan: c.rule.plan ?? undefined }),
  });
  if (!mw) throw new Error(`no module for ${c.name}`);
  app.use(mw);
  app.use((_req, res) => {
    res.json({ ok: true });
  });
  const http = await new Promise<import('node:http').Server>((resolve) => {
    const h = app.listen(0, '127.0.0.1', () => resolve(h));
  });
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}${c.path}`,
    close: async () => {
      mw.limiter.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

interface Read {
  status: number;
  q: number;
  w: number | null;
  remaining: number;
  reset: number;
}

/** What a client reads off a response, in the example's convention. */
function read(res: Response, convention: DesignData['headerConvention']): Read {
  if (convention === 'ietf-structured') {
    const policy = res.headers.get('ratelimit-policy') ?? '';
    const state = res.headers.get('ratelimit') ?? '';
    return {
      status: res.status,
      q: Number(/;q=(\d+)/.exec(policy)?.[1] ?? NaN),
      w: Number(/;w=(\d+)/.exec(policy)?.[1] ?? NaN),
      remaining: Number(/;r=(\d+)/.exec(state)?.[1] ?? NaN),
      reset: Number(/;t=(\d+)/.exec(state)?.[1] ?? NaN),
    };
  }
  const p = convention === 'x-ratelimit' ? 'x-ratelimit' : 'ratelimit';
  return {
    status: res.status,
    q: Number(res.headers.get(`${p}-limit`)),
    w: null,
    remaining: Number(res.headers.get(`${p}-remaining`)),
    reset: Number(res.headers.get(`${p}-reset`)),
  };
}

async function call(c: Case, url: string): Promise<Read> {
  const res = await fetch(url, {
    method: c.method,
    headers: { 'content-type': 'application/json' },
    ...(c.method === 'GET' ? {} : { body: '{}' }),
  });
  await res.arrayBuffer();
  return read(res, c.data.headerConvention);
}

// the cases run side by side: each has its own server and keys, and most of the time is waiting
describe.concurrent('a client that paces itself by the advertised policy is never refused', () => {
  it('covers every client-facing rule of every example, in both conventions the examples use', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(10);
    expect(new Set(CASES.map((c) => c.data.headerConvention))).toEqual(new Set(['ietf-structured', 'ietf-trio']));
  });

  it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const app = await serve(c);
    try {
      const { w } = policyOf(c.rule);
      const q = statedLimit(c.rule);
      // the advertised rate is the rule's rate (a soft quota's: its hard stop, where calls are refused)
      expect(q / w).toBeCloseTo(c.rule.limit / c.rule.periodSeconds, 9);
      const first = await call(c, app.url);
      expect(first.status).toBe(200);
      expect(first.q).toBe(q);
      if (first.w !== null) expect(first.w).toBe(w);
      // the even client: one call every w / q seconds, for two windows. A window rule counts
      // per window, so the client starts where the reset it was given says the next one begins
      // and sends in the middle of each slot (half a slot of slack for delivery jitter)
      const window = first.w ?? w;
      const gap = (window * 1000) / first.q;
      let started = performance.now();
      let offset = 1;
      if (c.rule.burst === null) {
        await sleep(first.reset * 1000);
        started = performance.now();
        offset = 0.5;
      }
      const statuses: number[] = [];
      for (let i = 0; i < 2 * first.q; i++) {
        const due = started + (i + offset) * gap;
        const wait = due - performance.now();
        if (wait > 0) await sleep(wait);
        statuses.push((await call(c, app.url)).status);
      }
      expect(
        statuses.filter((s) => s !== 200),
        'even client refused',
      ).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it.each(CASES.map((c) => [c.name, c] as const))('%s: draining what remains, then waiting the reset', async (_name, c) => {
    const app = await serve(c);
    try {
      for (let round = 0; round < 2; round++) {
        let r = await call(c, app.url);
        expect(r.status, `round ${round}: first call`).toBe(200);
        while (r.remaining > 0) {
          r = await call(c, app.url);
          expect(r.status, `round ${round}: a call the headers said remained`).toBe(200);
        }
        await sleep(r.reset * 1000 + 20);
      }
    } finally {
      await app.close();
    }
  });
});
