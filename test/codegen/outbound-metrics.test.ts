/**
 * The generated outbound client's metrics adapter, outboundMetrics(promClient, registry),
 * compiled with `tsc --strict` beside a consumer that hands it prom-client's own module and
 * Registry (so the types fit as they are), and run against a real redis-server: every series
 * of every provider exists at 0 before the first call, and the client's events land in the
 * metrics the design's alert rules read (ratelimit_throttled_total for RateLimitRareRuleFiring,
 * ratelimit_outbound_provider_429_total for RateLimitProviderThrottling, the store failures,
 * the wait histogram and the circuit gauge).
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { Counter, Registry } from 'prom-client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { generateOutbound } from '../../src/codegen/outbound/index.js';
import { exampleDesign } from '../helpers/examples.js';
import { freePort, startRedis, type RedisServer } from '../helpers/redis.js';
import { compileClient, type Compiled } from './support/outbound.js';

type Handler = (event: Record<string, unknown>) => void;
type Client = { schedule<T>(provider: string, fn: () => T | Promise<T>, options?: Record<string, unknown>): Promise<T> };

/** A counter or gauge's value for one label set (0 when the series is missing: see `has`). */
async function value(registry: Registry, name: string, labels: Record<string, string>): Promise<number | undefined> {
  const metric = registry.getSingleMetric(name);
  if (!metric) return undefined;
  const data = await metric.get();
  const hit = data.values.find((v) =>
    Object.entries(labels).every(([k, want]) => String((v.labels as Record<string, unknown>)[k]) === want),
  );
  return hit?.value;
}

/** The observation count of a histogram's series. */
async function histogramCount(registry: Registry, name: string, labels: Record<string, string>): Promise<number | undefined> {
  const metric = registry.getSingleMetric(name);
  if (!metric) return undefined;
  const data = await metric.get();
  const hit = data.values.find(
    (v) =>
      (v as { metricName?: string }).metricName === `${name}_count` &&
      Object.entries(labels).every(([k, want]) => String((v.labels as Record<string, unknown>)[k]) === want),
  );
  return hit?.value;
}

describe('generated outbound client: outboundMetrics adapter', () => {
  const design = exampleDesign('saas-platform');
  let compiled: Compiled;
  let use: { prometheus(registry: Registry): Handler };
  let mod: Record<string, any>;
  let server: RedisServer;
  let redis: Redis;
  let registry: Registry;

  const client = (onEvent: Handler, options: Record<string, unknown> = {}): Client =>
    new mod.OutboundClient({ redis, mode: () => 'enforce', onEvent, ...options }) as Client;

  beforeAll(async () => {
    compiled = await compileClient(generateOutbound(design));
    mod = compiled.module;
    use = (await import(pathToFileURL(join(compiled.dir, 'dist', 'use.js')).href)) as typeof use;
    server = await startRedis();
    redis = new Redis(server.port, server.host, { maxRetriesPerRequest: 1 });
  });
  beforeEach(async () => {
    await redis.flushall();
    registry = new Registry();
  });
  afterAll(async () => {
    await redis?.quit();
    await server?.stop();
    compiled?.remove();
  });

  it('names the metrics of the design, and the design says the outbound client emits them', () => {
    const names = Object.values(mod.OUTBOUND_METRIC_NAMES as Record<string, string>);
    for (const name of names) {
      const metric = design.monitoring.metrics.find((m) => m.name === name);
      expect(metric, name).toBeDefined();
      expect(metric?.emittedBy).toContain('outbound-client');
    }
    // and every metric the design credits to the outbound client is one of them
    const credited = design.monitoring.metrics.filter((m) => m.emittedBy?.includes('outbound-client')).map((m) => m.name);
    expect(names.sort()).toEqual(credited.sort());
  });

  it('every series of every provider exists at 0 before the first call, labels from PROVIDERS only', async () => {
    use.prometheus(registry);
    const text = await registry.metrics();
    for (const [rule, provider] of [
      ['outbound-stripe', 'Stripe'],
      ['outbound-sendgrid', 'SendGrid'],
    ] as const) {
      expect(text).toContain(`ratelimit_throttled_total{rule="${rule}",mode="enforce"} 0`);
      expect(text).toContain(`ratelimit_throttled_total{rule="${rule}",mode="shadow"} 0`);
      for (const reason of ['timeout', 'connection', 'script'])
        expect(text).toContain(`ratelimit_store_failures_total{rule="${rule}",reason="${reason}"} 0`);
      expect(text).toContain(`ratelimit_outbound_provider_429_total{provider="${provider}"} 0`);
      expect(text).toContain(`ratelimit_outbound_circuit_open{provider="${provider}"} 0`);
      expect(text).toContain(`ratelimit_outbound_wait_ms_count{provider="${provider}"} 0`);
    }
  });

  it('calls the bucket held back count as throttled (enforce), every wait is observed', async () => {
    const c = client(use.prometheus(registry));
    // SendGrid: 480 a minute (one every 125 ms), burst 8: of 12 calls at once, 4 wait
    await Promise.all(Array.from({ length: 12 }, () => c.schedule('SendGrid', () => 'ok')));
    expect(await value(registry, 'ratelimit_throttled_total', { rule: 'outbound-sendgrid', mode: 'enforce' })).toBe(4);
    expect(await value(registry, 'ratelimit_throttled_total', { rule: 'outbound-stripe', mode: 'enforce' })).toBe(0);
    expect(await histogramCount(registry, 'ratelimit_outbound_wait_ms', { provider: 'SendGrid' })).toBe(12);
    // a call that would wait longer than it may is refused, and counted too
    await expect(c.schedule('SendGrid', () => 'late', { maxWaitMs: 0 })).rejects.toMatchObject({ code: 'WAIT_TOO_LONG' });
    expect(await value(registry, 'ratelimit_throttled_total', { rule: 'outbound-sendgrid', mode: 'enforce' })).toBe(5);
  });

  it('shadow mode counts the calls that would have waited, under mode="shadow"', async () => {
    const c = client(use.prometheus(registry), { mode: () => 'shadow' });
    for (let i = 0; i < 10; i++) await c.schedule('SendGrid', () => 'ok');
    expect(await value(registry, 'ratelimit_throttled_total', { rule: 'outbound-sendgrid', mode: 'shadow' })).toBe(2);
    expect(await value(registry, 'ratelimit_throttled_total', { rule: 'outbound-sendgrid', mode: 'enforce' })).toBe(0);
  });

  it('a provider 429 counts in ratelimit_outbound_provider_429_total; an open circuit shows in the gauge', async () => {
    const c = client(use.prometheus(registry), { defaultRetryAfterMs: 1, circuit: { failureThreshold: 2 } });
    const throttled = { status: 429, headers: { 'retry-after': '0' } };
    await c.schedule('Stripe', () => throttled);
    expect(await value(registry, 'ratelimit_outbound_provider_429_total', { provider: 'Stripe' })).toBe(1);
    expect(await value(registry, 'ratelimit_outbound_circuit_open', { provider: 'Stripe' })).toBe(0);
    await c.schedule('Stripe', () => throttled);
    expect(await value(registry, 'ratelimit_outbound_provider_429_total', { provider: 'Stripe' })).toBe(2);
    expect(await value(registry, 'ratelimit_outbound_circuit_open', { provider: 'Stripe' })).toBe(1);
  });

  it('store failures count under the rule, with their reason', async () => {
    const port = await freePort();
    const dead = new Redis(port, '127.0.0.1', {
      maxRetriesPerRequest: 0,
      lazyConnect: true,
      enableOfflineQueue: true,
      retryStrategy: () => null,
    });
    try {
      const c = new mod.OutboundClient({ redis: dead, mode: () => 'enforce', maxWaitMs: 100, onEvent: use.prometheus(registry) }) as Client;
      await expect(c.schedule('Stripe', () => 'never')).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
      const connection = (await value(registry, 'ratelimit_store_failures_total', { rule: 'outbound-stripe', reason: 'connection' })) ?? 0;
      const timeout = (await value(registry, 'ratelimit_store_failures_total', { rule: 'outbound-stripe', reason: 'timeout' })) ?? 0;
      expect(connection + timeout).toBeGreaterThanOrEqual(1);
    } finally {
      dead.disconnect();
    }
  });

  it('shares a counter the middleware (or anyone) already registered under the same name', async () => {
    const existing = new Counter({
      name: 'ratelimit_throttled_total',
      help: 'middleware',
      labelNames: ['rule', 'mode'],
      registers: [registry],
    });
    existing.inc({ rule: 'fairness-pro', mode: 'enforce' }, 3);
    const c = client(use.prometheus(registry));
    await Promise.all(Array.from({ length: 9 }, () => c.schedule('SendGrid', () => 'ok')));
    expect(await value(registry, 'ratelimit_throttled_total', { rule: 'outbound-sendgrid', mode: 'enforce' })).toBe(1);
    expect(await value(registry, 'ratelimit_throttled_total', { rule: 'fairness-pro', mode: 'enforce' })).toBe(3);
  });
});
