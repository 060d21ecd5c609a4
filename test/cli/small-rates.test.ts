/**
 * A rate below one request per period (the answers allow down to 0.001) is written over a period
 * where its count is not 0, everywhere the product states it: the document, the gateway files'
 * comments and validate's messages.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { rateFigure, ratePer, rateWords, rpsText, shownRate } from '../../src/format.js';
import { exampleAnswers } from '../helpers/examples.js';
import { generatedFiles, runCli, tempDir } from '../helpers/cli.js';

const DATE = '2026-12-02';

/** A rate (or a share of one) written with a count of 0: "0 / 1 s", "0 per minute", "0/second", "0 req/s", "floor(0)". */
const ZERO_RATE = /(?<![\d.,])0 ?(?:\/ |per |req\/s)|(?<![\d.,])0\/(?:s|second|minute|hour|day)\b|floor\(0\)|(?<![\d.,])0 of \d/;

function zeroRates(text: string): string[] {
  return text.split('\n').filter((l) => ZERO_RATE.test(l) && !l.includes('sum by'));
}

function answersFile(gateway: string, edgeRate: { requests: number; per: 'second' | 'minute' } | undefined): string {
  const a = exampleAnswers('saas-platform') as Record<string, unknown> & { stack: Record<string, unknown>; outbound: unknown[] };
  a.$schema = undefined;
  a.openapi = undefined;
  a.stack.gateway = gateway;
  a.outbound = [...a.outbound, { name: 'Tiny', limit: { requests: 0.001, per: 'second' } }];
  a.rules = [
    {
      id: 'slow-export',
      endpoints: ['export-orders'],
      identity: 'tenant',
      algorithm: 'gcra',
      primitive: 'redis-lua',
      failMode: 'open',
      layer: 'middleware',
      ttlSeconds: 100000,
      cardinalityBound: 2000,
      rate: { requests: 0.001, per: 'second' },
      burst: 1,
    },
    ...(edgeRate ? [{ id: 'slow-edge', endpoints: ['sales-report'], identity: 'ip', layer: 'edge', rate: edgeRate }] : []),
  ];
  const file = path.join(tempDir(), 'small.answers.json');
  writeFileSync(file, JSON.stringify(a));
  return file;
}

describe('a rate below one request per period', () => {
  it('is written over a longer period, never with a count of 0', () => {
    expect(shownRate(0.001, 1)).toEqual({ requests: 1, periodSeconds: 1000 });
    expect(rateFigure({ requests: 0.001, periodSeconds: 1 })).toBe('1 / 1,000 s');
    expect(rateFigure({ requests: 0.003, periodSeconds: 1 })).toBe('3 / 1,000 s');
    expect(rateFigure({ requests: 0.003, periodSeconds: 60 })).toBe('1 / 20,000 s');
    expect(ratePer({ requests: 0.001, periodSeconds: 60 }, true)).toBe('1 per 1,000 min');
    expect(rateWords(0.001, 1)).toBe('1 per 1,000 s');
    expect(rpsText(0.001)).toBe('1 / 1,000 s');
    // rates the document already writes exactly keep their text
    expect(rateFigure({ requests: 600, periodSeconds: 60 })).toBe('600 / 60 s');
    expect(rateFigure({ requests: 0.5, periodSeconds: 1 })).toBe('0.5 / 1 s');
    expect(ratePer({ requests: 5, periodSeconds: 3600 }, true)).toBe('5 per hour');
    expect(rpsText(300)).toBe('300 req/s');
  });

  it('states no 0 rate in the document or the shipped files (a hand rule and a provider at 0.001/s)', () => {
    for (const gateway of ['nginx', 'envoy', 'kong']) {
      const { doc, files } = generatedFiles(
        answersFile(gateway, gateway === 'nginx' ? undefined : { requests: 0.001, per: 'minute' }),
        DATE,
      );
      expect(zeroRates(doc), gateway).toEqual([]);
      for (const f of files) expect(zeroRates(f.content), `${gateway} ${f.path}`).toEqual([]);
      expect(doc).toContain('| [`slow-export`](#rule-slow-export) | export-orders | tenant | 1 / 1,000 s, burst 1 |');
      expect(doc).toContain('Tiny (1 per 1,000 s)');
      // an outbound bucket's rate in the assumptions carries its unit, as the provider's limit does
      expect(doc).toContain(
        "the bucket runs at 90% of the provider's limit (Stripe: 90/second of 100/second and Tiny: 1 per 1,000 s of 1 per 1,000 s)",
      );
    }
  });

  it("states no 0 rate in validate's refusal of an edge rule the gateway cannot count", () => {
    for (const gateway of ['nginx', 'aws-api-gateway', 'cloudflare']) {
      const r = runCli(['validate', '-a', answersFile(gateway, { requests: 0.001, per: 'minute' })]);
      expect(r.code, gateway).toBe(2);
      expect(r.stderr).toContain('$.rules[1].rate: 1 per 1,000 min at the edge cannot be counted');
      expect(zeroRates(r.stderr), gateway).toEqual([]);
    }
  });
});
