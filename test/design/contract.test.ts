/**
 * The response contract in the design model: the window a policy states, the example 429s
 * (built from the real rule's numbers, with the middleware's own body), the quota exposure,
 * and the rules enforced only at the edge. test/middleware/contract.test.ts holds the same
 * numbers against the compiled middleware over HTTP.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Answers } from '../../src/answers/schema.js';
import { checkDesign } from '../../src/constraints/index.js';
import { buildDesign } from '../../src/design/build.js';
import { policyWindowSeconds, problemBody, rateLimitHeaders, shownRuleOf, type ShownRule } from '../../src/design/contract.js';
import { policyOf } from '../../src/runtime/middleware/responses.js';
import type { Design, MatrixRule } from '../../src/design/model.js';
import { renderMarkdown } from '../../src/render/markdown/index.js';
import { DATE, exampleAnswers, exampleDesign, exampleNames } from '../helpers/examples.js';

const rule = (d: Design, id: string): MatrixRule => {
  const r = d.rules.find((x) => x.id === id);
  if (!r) throw new Error(`no rule ${id}`);
  return r;
};
const shownOf = (d: Design, id: string): ShownRule => shownRuleOf(rule(d, id)) as ShownRule;
const header = (d: Design, name: string): string | undefined => d.contract.headers.find((h) => h.name === name)?.example;

/** The saas-platform answers with another header convention (and optionally every plan hard). */
function saasWith(convention: 'ietf-structured' | 'ietf-trio' | 'x-ratelimit', allHard = false): Design {
  const raw = JSON.parse(JSON.stringify(exampleAnswers('saas-platform'))) as Record<string, any>;
  raw.headers = { ...raw.headers, convention };
  if (allHard) raw.plans = raw.plans.map((p: Record<string, unknown>) => ({ ...p, exhaustion: 'hard' }));
  return buildDesign(Answers.parse(raw), { date: DATE });
}

describe('RateLimit-Policy states the real window', () => {
  const saas = exampleDesign('saas-platform');
  const minimal = exampleDesign('minimal-generic');

  it('token-bucket rules: q = burst per w = the time a drained bucket takes to refill', () => {
    // Free: 60/min, burst 25 -> 25 per 25 s (1/s); Enterprise: 50/s, burst 500 -> 500 per 10 s
    expect(header(saas, 'RateLimit-Policy')).toBe('"fairness-free";q=25;w=25');
    expect(header(saas, 'RateLimit')).toBe('"fairness-free";r=24;t=1');
    expect(policyWindowSeconds(shownOf(saas, 'fairness-enterprise'))).toBe(10);
    expect(
      rateLimitHeaders('ietf-structured', {
        rule: shownOf(saas, 'fairness-enterprise'),
        s: { limit: 500, remaining: 499, resetSeconds: 1, windowSeconds: 10 },
      })[0],
    ).toEqual(['RateLimit-Policy', '"fairness-enterprise";q=500;w=10']);
    // minimal-generic: 20/s, burst 100 -> 100 per 5 s, not 100 per second
    expect(header(minimal, 'RateLimit-Policy')).toBe('"fairness-per-api-key";q=100;w=5');
    expect(minimal.contract.rateLimitedBody).toMatchObject({ limit: { rule: 'fairness-per-api-key', quota: 100, windowSeconds: 5 } });
  });

  it.each(exampleNames())(
    '%s: every rule states exactly its rate (q / w), q within the burst when a whole-second window allows',
    (name) => {
      const d = exampleDesign(name);
      for (const r of d.rules.filter((x) => x.headers === 'full' && x.rate)) {
        const s = shownRuleOf(r) as ShownRule;
        const { q, w } = policyOf(s);
        const rate = s.limit / s.periodSeconds;
        // never less than promised (a client pacing by the header gets the rate it pays for), never more
        expect(q / w, r.id).toBeCloseTo(rate, 9);
        expect(Number.isInteger(q) && Number.isInteger(w) && w >= 1, r.id).toBe(true);
        if (s.burst !== null) {
          const smallest = s.limit / gcdOf(s.limit, s.periodSeconds);
          expect(q, r.id).toBe(s.burst >= smallest ? Math.floor(s.burst / smallest) * smallest : smallest);
        } else {
          expect(q, r.id).toBe(s.limit);
        }
      }
    },
  );

  it('a burst below one exact step states the rate itself; fractional rates fall back to the refill time', () => {
    expect(policyOf({ limit: 90, periodSeconds: 1, burst: 10 })).toEqual({ q: 90, w: 1 });
    expect(policyOf({ limit: 500, periodSeconds: 1, burst: 4800 })).toEqual({ q: 4500, w: 9 });
    expect(policyOf({ limit: 1, periodSeconds: 60, burst: 12 })).toEqual({ q: 12, w: 720 });
    expect(policyOf({ limit: 7, periodSeconds: 60, burst: 10 })).toEqual({ q: 7, w: 60 });
    expect(policyOf({ limit: 2.5, periodSeconds: 1, burst: 10 })).toEqual({ q: 10, w: 4 });
  });

  it('window rules keep q = limit per period', () => {
    expect(policyWindowSeconds({ limit: 10, periodSeconds: 900, burst: null })).toBe(900);
  });
});

describe('the example 429s are ones the middleware really sends for the rule they name', () => {
  const saas = exampleDesign('saas-platform');

  it('RATE_LIMITED: Retry-After of one token, reset to a full bucket, the runtime detail text', () => {
    const c = saas.contract;
    expect(c.rateLimitedExample?.ruleId).toBe('fairness-free');
    expect(c.rateLimitedBody).toEqual({
      type: 'https://developer.acme.example/docs/rate-limits#rate-limited',
      title: 'Too many requests',
      status: 429,
      code: 'RATE_LIMITED',
      detail: 'Limit fairness-free exceeded; retry after the time in Retry-After, plus random jitter.',
      limit: { rule: 'fairness-free', quota: 25, windowSeconds: 25 },
      retryAfterSeconds: 1,
      resetSeconds: 25,
      documentation: 'https://developer.acme.example/docs/rate-limits',
    });
    expect(c.rateLimitedExample?.headers).toEqual([
      { name: 'Content-Type', value: 'application/problem+json; charset=utf-8' },
      { name: 'RateLimit-Policy', value: '"fairness-free";q=25;w=25' },
      { name: 'RateLimit', value: '"fairness-free";r=0;t=25' },
      { name: 'Retry-After', value: '1' },
    ]);
    // the sequence diagram waits what the example says
    expect(c.sequenceDiagram?.edges.map((e) => e.label)).toContain('429, Retry-After: 1');
  });

  it('a slow rule waits a whole token: 1 per minute, burst 12 -> Retry-After 60, reset 720', () => {
    const d = buildDesign(
      Answers.parse({
        project: { name: 'slow' },
        identities: ['api-key'],
        endpoints: [{ name: 'items', method: 'GET', route: '/v1/items', class: 'read' }],
        headers: { convention: 'x-ratelimit' },
        rules: [{ id: 'fairness-per-api-key', rate: { requests: 1, per: 'minute' }, burst: 12 }],
      }),
      { date: DATE },
    );
    expect(d.contract.rateLimitedBody).toMatchObject({
      retryAfterSeconds: 60,
      resetSeconds: 720,
      limit: { quota: 12, windowSeconds: 720 },
    });
    expect(d.contract.rateLimitedExample?.headers.slice(1)).toEqual([
      { name: 'X-RateLimit-Limit', value: '12' },
      { name: 'X-RateLimit-Remaining', value: '0' },
      { name: 'X-RateLimit-Reset', value: '720' },
      { name: 'Retry-After', value: '60' },
    ]);
  });

  it('QUOTA_EXCEEDED: the fields and detail the runtime sends (windowSeconds, resetSeconds), no invented period text', () => {
    const body = saas.contract.quotaExceededBody;
    expect(body).toEqual({
      type: 'https://iana.org/assignments/http-problem-types#quota-exceeded',
      title: 'Quota exceeded',
      status: 429,
      code: 'QUOTA_EXCEEDED',
      detail: 'The quota quota-free for this period is used up; it resets in 86400 s.',
      'violated-policies': ['quota-free'],
      limit: { rule: 'quota-free', quota: 10000, windowSeconds: 30 * 86400 },
      retryAfterSeconds: 86400,
      resetSeconds: 86400,
      documentation: 'https://developer.acme.example/docs/rate-limits',
    });
    expect(saas.contract.quotaExceededExample?.situation).toMatch(/30-day month/);
    expect(saas.contract.quotaExceededExample?.headers.map((h) => `${h.name}: ${h.value}`)).toEqual([
      'Content-Type: application/problem+json; charset=utf-8',
      'RateLimit-Policy: "quota-free";q=10000;w=2592000',
      'RateLimit: "quota-free";r=0;t=86400',
      'Retry-After: 86400',
    ]);
  });

  it('the bodies come from the one builder the runtime mirrors (silent rules answer without counts)', () => {
    const docs = saas.contract.docsUrl;
    expect(problemBody(docs, shownOf(saas, 'auth-login-per-ip'), { limit: 100, resetSeconds: 900, windowSeconds: 900 }, 7)).toEqual({
      type: `${docs}#rate-limited`,
      title: 'Too many requests',
      status: 429,
      code: 'RATE_LIMITED',
      detail: 'Too many attempts. Retry after the time in Retry-After.',
      retryAfterSeconds: 7,
      documentation: docs,
    });
  });

  it('the document prints the example headers and bodies as they are', () => {
    const input = { design: saas, checks: checkDesign(saas) };
    const doc = renderMarkdown(input, { layout: 'single' })[0]?.content ?? '';
    expect(doc).toContain(
      `HTTP/1.1 429 Too Many Requests\nContent-Type: application/problem+json; charset=utf-8\nRateLimit-Policy: "fairness-free";q=25;w=25\nRateLimit: "fairness-free";r=0;t=25\nRetry-After: 1\n\n${JSON.stringify(saas.contract.rateLimitedBody, null, 2)}\n`,
    );
    expect(doc).toContain(`Retry-After: 86400\n\n${JSON.stringify(saas.contract.quotaExceededBody, null, 2)}\n`);
    expect(doc).not.toContain('"period":');
  });
});

describe('remaining quota on every response a quota counts', () => {
  it('structured fields: the quota as a second item of RateLimit-Policy and RateLimit', () => {
    const d = exampleDesign('saas-platform');
    expect(d.contract.quotaHeaders.map((h) => [h.name, h.example])).toEqual([
      ['RateLimit-Policy', '"fairness-free";q=25;w=25, "quota-free";q=10000;w=2592000'],
      ['RateLimit', '"fairness-free";r=24;t=1, "quota-free";r=9999;t=2592000'],
      ['Quota-Exceeded', '"quota-pro";over=1'],
    ]);
    expect(d.contract.quotaHeaders[0]?.meaning).toMatch(/length of the current calendar month/);
  });

  it('single-value conventions: a documented quota trio beside their own trio', () => {
    expect(saasWith('ietf-trio').contract.quotaHeaders.map((h) => [h.name, h.example])).toEqual([
      ['RateLimit-Quota-Limit', '10000'],
      ['RateLimit-Quota-Remaining', '9999'],
      ['RateLimit-Quota-Reset', '2592000'],
      ['Quota-Exceeded', '"quota-pro";over=1'],
    ]);
    const x = saasWith('x-ratelimit');
    expect(x.contract.quotaHeaders.map((h) => h.name)).toEqual([
      'X-RateLimit-Quota-Limit',
      'X-RateLimit-Quota-Remaining',
      'X-RateLimit-Quota-Reset',
      'Quota-Exceeded',
    ]);
    // a quota's own refusal fills the quota trio too
    expect(x.contract.quotaExceededExample?.headers.map((h) => h.name)).toEqual([
      'Content-Type',
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
      'X-RateLimit-Quota-Limit',
      'X-RateLimit-Quota-Remaining',
      'X-RateLimit-Quota-Reset',
      'Retry-After',
    ]);
    for (const d of [saasWith('ietf-trio'), x]) expect(checkDesign(d).find((c) => c.id === 'response-contract')?.messages).toEqual([]);
  });

  it('a calendar quota names its window where the convention states it: w only in RateLimit-Policy', () => {
    const structured = saasWith('ietf-structured');
    expect(structured.contract.quotaHeaders.find((h) => h.name === 'RateLimit-Policy')?.meaning).toMatch(/w is the length of the current/);
    expect(structured.contract.quotaExceededExample?.situation).toMatch(/w \(and the body's limit\.windowSeconds\) is the length/);
    for (const convention of ['ietf-trio', 'x-ratelimit'] as const) {
      const d = saasWith(convention);
      // no header of these conventions has a w: the text must not speak of one
      for (const h of d.contract.quotaHeaders) expect(h.meaning).not.toMatch(/\bw\b/);
      expect(d.contract.quotaExceededExample?.situation).not.toMatch(/\bw\b/);
      expect(d.contract.quotaExceededExample?.situation).toMatch(/the body's limit\.windowSeconds is the length of the current/);
      expect(d.contract.quotaHeaders[0]?.meaning).toMatch(/The period is the current calendar/);
    }
  });

  it("the overage warning header says it is the design's own and the same for both soft kinds", () => {
    const meaning = saasWith('ietf-trio').contract.quotaHeaders.find((h) => h.name === 'Quota-Exceeded')?.meaning;
    expect(meaning).toMatch(/not one of the IETF RateLimit draft's/);
    expect(meaning).toMatch(/the same for a soft-warning and a pay-per-overage plan/);
  });

  it('no overage warning header when no plan passes calls past its quota', () => {
    expect(saasWith('ietf-structured', true).contract.quotaHeaders.map((h) => h.name)).toEqual(['RateLimit-Policy', 'RateLimit']);
  });

  it('the quota text claims no usage endpoint, and the soft overage names its warning', () => {
    const q = exampleDesign('saas-platform').quotas;
    expect(q?.remainingExposure).not.toMatch(/and on a usage endpoint/);
    expect(q?.remainingExposure).toMatch(/No usage endpoint is generated.*yours to build/);
    expect(q?.remainingExposure).toMatch(/second item/);
    expect(q?.exhaustionText['soft-warning']).toMatch(/Quota-Exceeded header/);
    expect(q?.exhaustionText['soft-warning']).not.toMatch(/the response says the quota is exceeded/);
    expect(saasWith('x-ratelimit').quotas?.remainingExposure).toMatch(/X-RateLimit-Quota-Remaining/);
  });
});

describe('rules enforced only at the edge', () => {
  const saas = exampleDesign('saas-platform');

  it('are marked as sending 429 + Retry-After only, listed in the contract, and constraint 3 holds', () => {
    expect(rule(saas, 'global-ceiling').headers).toBe('edge');
    expect(rule(saas, 'anonymous-per-ip').headers).toBe('edge');
    expect(rule(saas, 'fairness-free').headers).toBe('full');
    expect(saas.contract.edgeRuleIds).toEqual(['global-ceiling', 'anonymous-per-ip']);
    // the plan rows count identified callers of public-catalog: only its anonymous calls are the edge's alone
    expect(saas.contract.edgeOnlyEndpoints).toEqual([]);
    expect(saas.contract.edgeOnlyAnonymous).toEqual(['public-catalog']);
    expect(checkDesign(saas).find((c) => c.id === 'response-contract')?.passed).toBe(true);
  });

  it("an anonymous API that the application keys on nothing but the address: every call is the edge's alone", () => {
    const raw = JSON.parse(readFileSync(new URL('./fixtures/anonymous-cgnat.answers.json', import.meta.url), 'utf8'));
    const d = buildDesign(Answers.parse(raw), { date: DATE });
    expect(d.contract.edgeOnlyEndpoints).toEqual(['departures', 'stops', 'search-stops']);
    expect(d.contract.edgeOnlyAnonymous).toEqual([]);
    const doc = renderMarkdown({ design: d, checks: checkDesign(d) }, { layout: 'single' })[0]?.content ?? '';
    expect(doc).toMatch(/calls to `departures`, `stops`, `search-stops`\s+are counted only at the edge/);
    expect(doc).not.toMatch(/anonymous calls to/);
  });

  it('the matrix and the contract section say so', () => {
    const doc = renderMarkdown({ design: saas, checks: checkDesign(saas) }, { layout: 'single' })[0]?.content ?? '';
    // each rule's headers are in its details under the matrix
    const details = (id: string) => doc.slice(doc.indexOf(`#### Rule \`${id}\``)).split('\n#### ')[0] ?? '';
    expect(details('global-ceiling')).toContain('**Headers:** 429 + Retry-After only (edge).');
    expect(details('anonymous-per-ip')).toContain('**Headers:** 429 + Retry-After only (edge).');
    expect(details('fairness-free')).toContain('**Headers:** full.');
    expect(doc).toMatch(/Rules enforced at the edge/);
    expect(doc).toMatch(
      /anonymous calls to `public-catalog` are counted only at the edge \(the application's\s+rules there count callers it identifies\)/,
    );
  });

  it('the example rule is always one the middleware enforces', () => {
    for (const name of exampleNames()) {
      const d = exampleDesign(name);
      const id = d.contract.rateLimitedExample?.ruleId;
      expect(id && rule(d, id).layer, name).toBe('middleware');
    }
  });
});

function gcdOf(a: number, b: number): number {
  return b === 0 ? a : gcdOf(b, a % b);
}
