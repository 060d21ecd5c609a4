/**
 * verify drives the shipped runtime, not a twin of it: the limiter a probe runs is
 * createLimiter() on the rule's compiled spec (keys built by the runtime's own rules, the
 * identity from the identify() hook, the 429 and its headers from responses.ts), and an
 * outbound probe is the OutboundClient. Against a real redis-server.
 */
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shippedScripts } from '../../src/commands/verify.js';
import { compileDesign, designData } from '../../src/codegen/middleware/index.js';
import { hashTag, usernameKey } from '../../src/runtime/middleware/keys.js';
import { openStore, parseRedisUrl, type RedisTarget, type Store } from '../../src/verify/redis.js';
import { InboundProbe, OutboundProbe, testIp, verifyData, type ProbeSink } from '../../src/verify/runtime.js';
import { logFor, shapeFor } from '../../src/verify/shapes.js';
import { exampleDesign } from '../helpers/examples.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';

const RUN = 'rl-verify:0123456789abcdef:';
const design = exampleDesign('saas-platform');
const scripts = shippedScripts();
const data = verifyData(design, scripts);

let server: RedisServer;
let store: Store;
const wrote = new Map<string, number>();
const closers: (() => void)[] = [];
let serial = 0;
const sink: ProbeSink = {
  runPrefix: RUN,
  serial: () => ++serial,
  wrote: (key, ttl) => wrote.set(key, ttl),
  sample: () => undefined,
  opened: (close) => closers.push(close),
};

beforeAll(async () => {
  server = await startRedis();
  store = await openStore(parseRedisUrl(server.url) as RedisTarget, undefined, { poolSize: 1 });
});

afterAll(async () => {
  for (const close of closers) close();
  await store?.close();
  await server?.stop();
});

describe('the limiter verify runs', () => {
  it('is the compiled spec of the rule, as the generated design.ts holds it', () => {
    const shipped = designData(compileDesign(design));
    for (const rule of shipped.rules) expect(data.specs.get(rule.id)).toEqual(rule);
    // the rules' scripts; the penalty box's is not run (a probe's caller is never boxed)
    expect(shipped.scripts.map((s) => s.name)).toContain('penalty');
    expect(data.base.scripts.map((s) => s.sha1)).toEqual(shipped.scripts.filter((s) => s.name !== 'penalty').map((s) => s.sha1));
    expect(data.base.headerConvention).toBe(shipped.headerConvention);
  });

  it('keys a plan rule on the tenant identify() returns, under the run prefix, and answers 429 with the runtime headers', async () => {
    const spec = data.specs.get('fairness-free')!;
    const shape = shapeFor('gcra', design.rules.find((r) => r.id === 'fairness-free')!, design, 'exact', Date.now());
    const probe = new InboundProbe(data.base, [{ spec, shape, number: 2 }], 'burst', [store.main], scripts, new Registry(), sink);
    for (let i = 0; i < shape.capacity; i++) expect((await probe.call(1)).allowed).toBe(true);
    const refused = await probe.call(1);
    expect(refused).toMatchObject({ allowed: false, status: 429, deniedBy: 'fairness-free' });
    expect(refused.retryAfterHeader).toBe(Math.ceil(refused.retryAfterMs / 1000));
    // the tenant's hash: the design keeps its fairness bucket and quota there, field req:free
    const key = `${RUN}r2:burst-${probe.serial}:{t:verify-${probe.serial}}`;
    expect(probe.lastKeys).toEqual([key]);
    expect(wrote.get(key)).toBe(shape.maxTtlMs);
    expect(await store.pttl(key)).toBeGreaterThan(0);
    expect(await store.main.hkeys(key)).toEqual(['req:free']);
  });

  it('checks both rows of dual-key auth in one script call, the username hashed by the runtime', async () => {
    const u = design.rules.find((r) => r.id === 'auth-login-per-identity')!;
    const ip = design.rules.find((r) => r.id === 'auth-login-per-ip')!;
    const probe = new InboundProbe(
      data.base,
      [
        { spec: data.specs.get(u.id)!, shape: logFor(u, 'exact'), number: 6 },
        { spec: data.specs.get(ip.id)!, shape: logFor(ip, 'exact'), number: 7 },
      ],
      'dual',
      [store.main],
      scripts,
      new Registry(),
      sink,
    );
    const d = await probe.as({ id: 41, ip: 42 });
    expect(d.allowed).toBe(true);
    expect(probe.lastKeys).toEqual([
      `${RUN}r6:dual-${probe.serial}:{auth:login}:un:${usernameKey('verify-41')}`,
      `${RUN}r7:dual-${probe.serial}:{auth:login}:ip:${testIp(42)}`,
    ]);
    expect(new Set(probe.lastKeys.map(hashTag))).toEqual(new Set(['auth:login']));
  });

  it('schedules outbound calls through the OutboundClient on a fresh bucket', async () => {
    const rule = design.rules.find((r) => r.id === 'outbound-stripe')!;
    const shape = shapeFor('outbound', rule, design, 'exact', Date.now());
    const probe = new OutboundProbe(design, rule, 16, shape, 'burst', [store.main], scripts, sink);
    expect(probe.key).toBe(`${RUN}r16:burst-${probe.serial}:${rule.key}`);
    const admitted = [];
    for (let i = 0; i < shape.capacity; i++) admitted.push(await probe.call(1));
    expect(admitted.every((d) => d.allowed)).toBe(true);
    expect(admitted.map((d) => d.remaining)).toEqual(Array.from({ length: shape.capacity }, (_, i) => shape.capacity - 1 - i));
    const refused = await probe.call(1);
    expect(refused).toMatchObject({ allowed: false, status: 429 });
    expect(refused.retryAfterMs).toBeGreaterThan(0);
    expect((await probe.call(shape.capacity + 1)).retryAfterMs).toBe(-1);
  });
});
