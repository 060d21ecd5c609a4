/**
 * An endpoint that allows anonymous callers, over real HTTP with the generated Express and
 * Fastify middleware and a real redis-server: a partner presenting its API key there is refused
 * at its plan's limit (the bucket it spends on every other endpoint) and counted by its plan's
 * quota, while an anonymous caller is limited per IP only, by the per-IP row, and never by a
 * plan row keyed on its address. Design: test/fixtures/anonymous/partner-plans.answers.json
 * (Partner: burst 4 at 1/min; Trial: quota 3; anonymous per IP: burst 6 at 1/min; no gateway).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAnswers } from '../../src/answers/load.js';
import { buildDesign } from '../../src/design/build.js';
import { counter, hit, useServedMiddleware, type Framework } from './harness.js';

const FIXTURE = new URL('../fixtures/anonymous/partner-plans.answers.json', import.meta.url);
const design = buildDesign(parseAnswers(readFileSync(FIXTURE, 'utf8'), 'partner-plans.answers.json'), { date: '2026-12-03' });

const mw = useServedMiddleware({ partner: design }, { label: 'anon' });
const start = (fw: Framework) => mw.start(fw, 'partner');

/** A caller behind the trusted loopback proxy: its client IP, and its API key and plan when it has them. */
const caller = (ip: string, apiKey?: string, plan?: string): Record<string, string> => ({
  'x-forwarded-for': ip,
  ...(apiKey !== undefined ? { 'x-test-key': apiKey } : {}),
  ...(plan !== undefined ? { 'x-test-plan': plan } : {}),
});

/** The keys written under a prefix (without it), the ceiling's aside. */
async function keysOf(prefix: string): Promise<string[]> {
  return (await mw.redis.keys(`${prefix}:*`))
    .map((k) => k.slice(prefix.length + 1))
    .filter((k) => !k.includes('{global}'))
    .sort();
}

describe.each<Framework>(['express', 'fastify'])('%s middleware, an endpoint open to anonymous callers', (fw) => {
  it("a partner's API key there spends its plan's bucket, shared with its other endpoints, and is refused at the plan's limit", async () => {
    const s = await start(fw);
    const partner = caller('203.0.113.5', 'partner-1', 'Partner');
    const statuses = [
      (await hit(s.url, 'GET', '/v1/public', partner)).status,
      (await hit(s.url, 'GET', '/v1/items', partner)).status,
      (await hit(s.url, 'GET', '/v1/public', partner)).status,
      (await hit(s.url, 'GET', '/v1/items', partner)).status,
    ];
    expect(statuses).toEqual([200, 200, 200, 200]);
    // burst 4 spent across both routes: the fifth call, on the public route, is refused by the plan
    // (the per-IP row would admit 6 from this address)
    const refused = await hit(s.url, 'GET', '/v1/public', partner);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'RATE_LIMITED', limit: { rule: 'fairness-partner' } });
    expect(refused.headers.get('ratelimit')).toMatch(/^"fairness-partner";r=0;t=\d+$/);
    expect(await counter(s.registry, 'ratelimit_throttled_total', { rule: 'fairness-partner', mode: 'enforce' })).toBe(1);
    expect(await counter(s.registry, 'ratelimit_throttled_total', { rule: 'anonymous-per-ip' })).toBe(0);
    // its quota counted the public calls too: 2 + 2 admitted, the refused one not (the field holds
    // the window's end in epoch seconds, then the count in 9 digits: identity-limits.lua)
    const quota = (await mw.redis.hget(`${s.prefix}:{ak:partner-1}`, 'quota')) ?? '';
    expect(Number(quota.slice(-9))).toBe(4);
    expect(await keysOf(s.prefix)).toEqual(['{ak:partner-1}', '{ip:203.0.113.5}:anon']);
  });

  it("a trial key's calls there count toward its quota: the fourth is refused QUOTA_EXCEEDED", async () => {
    const s = await start(fw);
    const trial = caller('203.0.113.6', 'trial-1', 'Trial');
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await hit(s.url, 'GET', '/v1/public', trial)).status);
    expect(statuses).toEqual([200, 200, 200]);
    const refused = await hit(s.url, 'GET', '/v1/public', trial);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'QUOTA_EXCEEDED', limit: { rule: 'quota-trial' } });
  });

  it('an anonymous caller there is limited per IP, by the per-IP row alone: no plan row counts its address', async () => {
    const s = await start(fw);
    const anonymous = caller('198.51.100.7');
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await hit(s.url, 'GET', '/v1/public', anonymous)).status);
    // burst 6 per address, where the default plan (Partner, burst 4) would have refused the fifth
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);
    const refused = await hit(s.url, 'GET', '/v1/public', anonymous);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'RATE_LIMITED', limit: { rule: 'anonymous-per-ip' } });
    expect(await keysOf(s.prefix)).toEqual(['{ip:198.51.100.7}:anon']);
    expect(await counter(s.registry, 'ratelimit_decisions_total', { rule: 'fairness-partner' })).toBe(0);
    // another address has its own bucket
    expect((await hit(s.url, 'GET', '/v1/public', caller('198.51.100.8'))).status).toBe(200);
    // on an endpoint that expects an API key, a caller without one is still counted by address
    // under the plan row (the default plan's numbers), as the document says
    expect((await hit(s.url, 'GET', '/v1/items', anonymous)).status).toBe(200);
    expect(await keysOf(s.prefix)).toEqual(['{ak~ip:198.51.100.7}', '{ip:198.51.100.7}:anon', '{ip:198.51.100.8}:anon']);
  });
});
