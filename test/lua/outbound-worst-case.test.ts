/**
 * An outbound bucket's worst case, as the document states it and as the shipped client runs it:
 * the refill within one provider period counts whole calls, so a bucket rate that is not whole
 * (0.9/s) shows its floor in the formula, the burst assumption and the rationale, and the
 * numbers the generated client passes to outbound-bucket.lua book exactly that many calls
 * within one period on a real Redis.
 */
import { describe, expect, it } from 'vitest';
import type { Answers } from '../../src/answers/schema.js';
import { outboundProviders } from '../../src/codegen/outbound/client.js';
import { buildDesign } from '../../src/design/build.js';
import { worstCaseTable } from '../../src/design/worst-case.js';
import { exampleAnswers } from '../helpers/examples.js';
import { freshTag, run, useRedis } from './harness.js';

const s = useRedis();

const PROVIDERS = [
  { name: 'Slack', limit: { requests: 1, per: 'second' }, safetyFraction: 0.9 },
  { name: 'Mid', limit: { requests: 10, per: 'minute' }, safetyFraction: 0.85 },
  { name: 'Stripe', limit: { requests: 100, per: 'second' } },
  { name: 'SendGrid', limit: { requests: 600, per: 'minute' }, safetyFraction: 0.8 },
];

const design = buildDesign({ ...exampleAnswers('saas-platform'), outbound: PROVIDERS } as Answers, { date: '2026-12-03' });
const rows = worstCaseTable(design).filter((r) => r.layer === 'outbound-client');
const row = (id: string) => rows.find((r) => r.ruleId === id)!;

describe('outbound worst case: the formula and the number agree', () => {
  it('a bucket rate that is not whole shows its floor; a whole one is unchanged', () => {
    expect(rows.map((r) => [r.ruleId, r.formula, r.worstCase])).toEqual([
      ['outbound-slack', '1 + floor(0.9/s x 1 s)', 1],
      ['outbound-mid', '1 + 8/min x 1 min', 9],
      ['outbound-stripe', '10 + 90/s x 1 s', 100],
      ['outbound-sendgrid', '8 + 480/min x 1 min', 488],
    ]);
  });

  it('the burst assumption, the rationale and the derivation say the same', () => {
    const burst = design.assumptions.find((a) => a.field === 'outbound.burst')!.text;
    expect(burst).toContain('Slack 1 (1 + floor(0.9) = 1 call per second, exactly the limit of 1/second)');
    expect(burst).toContain('Mid 1 (the minimum; 1 + 8 = 9 calls per minute, within 10/minute)');
    expect(burst).not.toMatch(/\d\.\d+ = /);
    const slack = design.rules.find((r) => r.id === 'outbound-slack')!;
    expect(slack.rationale).toContain('sends at most 1 + floor(0.9) = 1 call in a second');
    const mid = design.rules.find((r) => r.id === 'outbound-mid')!;
    expect(mid.derivation).toContain("8 per minute = Mid's 10/minute x 85% (8.5), rounded down to whole calls");
  });

  it('the shipped client: the generated numbers book exactly the worst case within one period on a real Redis', async () => {
    for (const p of outboundProviders(design)) {
      const expected = row(p.ruleId).worstCase;
      // book calls one after another (each may wait as long as it takes): the time each is sent, from the
      // first, taken as the middle of its round trip. A round trip slower than 2 ms (a loaded machine)
      // blurs that time by more than the slack below, so such a run is booked again on a fresh key
      let sentAt: number[] = [];
      for (let attempt = 0; attempt < 8; attempt++) {
        const key = `${freshTag('out')}bucket`;
        const times: number[] = [];
        let slowest = 0;
        for (let i = 0; i < expected + 3; i++) {
          const before = performance.now();
          const [reserved, wait] = await run(
            s.redis,
            'outbound-bucket',
            [key],
            ['reserve', p.burst, p.rate, p.periodMs, 1, 10 * p.periodMs],
          );
          const after = performance.now();
          expect(reserved, p.name).toBe(1);
          slowest = Math.max(slowest, after - before);
          times.push((before + after) / 2 + (wait ?? 0));
        }
        sentAt = times;
        if (slowest <= 2) break;
      }
      // within one period from the first call (2 ms allowed for the clocks and the rounding of waits), and the next slot past it
      const slack = 2;
      const within = sentAt.filter((t) => t - sentAt[0]! <= p.periodMs + slack).length;
      expect([p.name, within]).toEqual([p.name, expected]);
      expect(sentAt[expected]! - sentAt[0]!).toBeGreaterThan(p.periodMs + slack);
    }
  });
});
