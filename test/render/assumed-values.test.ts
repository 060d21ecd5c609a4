/**
 * The document marks every value a default filled in, shows a quota and its backstop as two
 * numbers, and warns when an outbound burst can pass the provider's limit.
 */
import { readFileSync } from 'node:fs';
import { Lexer, type Tokens } from 'marked';
import { describe, expect, it } from 'vitest';
import { renderMarkdown } from '../../src/render/markdown/index.js';
import { answersOf, exampleInput, inputFromAnswers } from './fixtures.js';

function doc(input: ReturnType<typeof exampleInput>): string {
  return renderMarkdown(input, { layout: 'single' })[0]?.content ?? '';
}

/** Rows of the first table whose header starts with the given cells, as cell texts (raw). */
function rows(markdown: string, ...header: string[]): string[][] {
  const table = Lexer.lex(markdown, { gfm: true }).find(
    (t): t is Tokens.Table => t.type === 'table' && header.every((h, i) => (t as Tokens.Table).header[i]?.text === h),
  );
  if (!table) throw new Error(`no table ${header.join(' | ')}`);
  return table.rows.map((r) => r.map((c) => c.text));
}

const answer = (table: string[][], question: string): string => table.find((r) => r[0] === question)?.[1] ?? '';

describe('Question/Answer table', () => {
  it('marks every defaulted value of the generic design as assumed', () => {
    const md = doc(exampleInput('minimal-generic'));
    const qa = rows(md, 'Question', 'Answer');
    expect(md).toContain('Answers marked "(assumed)" were not given');
    for (const q of [
      'Protects against',
      'Gateway / reverse proxy',
      'Limiter store',
      'Trusted proxies',
      'Identities',
      'Burstiness',
      'Promised limits',
      'Failure posture',
      'Outbound APIs',
    ]) {
      expect(answer(qa, q), q).toMatch(/\(assumed\)$/);
    }
    expect(answer(qa, 'Stack')).toBe('TypeScript (assumed), Express (assumed)');
    expect(answer(qa, 'Traffic')).toBe('50 req/s typical (assumed), 150 req/s peak (assumed), headroom x1.5 (assumed)');
    // the topology was given
    expect(answer(qa, 'Topology')).toBe('single instance');
    // no user population is invented for a design keyed on API keys
    expect(answer(qa, 'Population')).toBe('1,000 clients (assumed)');
  });

  it('marks only what was assumed when most answers were given', () => {
    const qa = rows(doc(exampleInput('saas-platform')), 'Question', 'Answer');
    expect(answer(qa, 'Traffic')).toBe('800 req/s typical, 2,400 req/s peak, headroom x2 (assumed)');
    expect(answer(qa, 'Topology')).toBe('horizontally scaled, 6 instances');
    expect(answer(qa, 'Population')).toBe('5,000 clients, 1,200 tenants, 90,000 users');
    expect(answer(qa, 'Outbound APIs')).toBe('Stripe (100/second), SendGrid (600/minute)');
  });

  it('marks derived endpoint flags and class-default costs, and leaves the MFA step non-anonymous', () => {
    const md = doc(exampleInput('consumer-auth'));
    const eps = rows(md, 'Endpoint', 'Method', 'Route');
    const row = (name: string) => eps.find((r) => r[0] === name) ?? [];
    expect(row('login')[4]).toBe('yes (assumed)');
    expect(row('verify-otp')[4]).toBe('no');
    expect(row('post')[5]).toBe('2 (assumed)');
    expect(row('feed')[5]).toBe('1');
    expect(md).toContain('- `endpoints.anonymous`: login, signup and forgot-password are auth endpoints not marked anonymous');
  });

  it('marks nothing when every answer was given', () => {
    const raw = answersOf('saas-platform') as Record<string, any>;
    const full = {
      ...raw,
      traffic: { ...raw.traffic, headroom: 2, clientPeakRps: 2, clientsPerAddress: 30 },
      plans: raw.plans.map((p: Record<string, unknown>) => ({
        burst: 10,
        ...p,
        ...(p.exhaustion && p.exhaustion !== 'hard' ? { overageCap: (p.quota as number) * 2 } : {}),
      })),
      endpoints: raw.endpoints.map((e: Record<string, unknown>) => ({ cost: 1, ...e, anonymous: e.class === 'auth' ? true : e.anonymous })),
      outbound: raw.outbound.map((o: Record<string, unknown>) => ({ safetyFraction: 0.9, burst: 1, ...o })),
    };
    const md = doc(inputFromAnswers(full));
    expect(md).not.toContain('Answers marked "(assumed)"');
    expect(rows(md, 'Question', 'Answer').every((r) => !r[1]?.includes('(assumed)'))).toBe(true);
  });
});

describe('a failure posture stated for some classes only', () => {
  const review = JSON.parse(readFileSync(new URL('../fixtures/review/fastify-kong.answers.json', import.meta.url), 'utf8'));
  delete review.$schema;

  it('marks the classes it leaves out as assumed, in the scope table, the fail-mode table and the assumptions', () => {
    // failure.byClass states auth, read and write; the endpoints also use export, webhook and health
    const md = doc(inputFromAnswers(review));
    expect(answer(rows(md, 'Question', 'Answer'), 'Failure posture')).toBe(
      'auth fail closed, read fail open, write fail closed, export fail open (assumed), webhook fail open (assumed), health fail open (assumed)',
    );
    const modes = rows(md, 'Class', 'Answered', 'Effective');
    const answered = (c: string) => modes.find((r) => r[0] === c)?.[1];
    expect(answered('write')).toBe('fail closed');
    expect(answered('export')).toBe('fail open (assumed)');
    expect(answered('webhook')).toBe('fail open (assumed)');
    expect(md).toContain(
      '- `failure.byClass.export, failure.byClass.webhook, failure.byClass.health`: Fail mode not stated for export, webhook and health (failure.byClass names auth, read and write): export fails open, webhook fails open and health fails open, by the rule of thumb',
    );
  });

  it('marks nothing once every class the endpoints use is stated', () => {
    const full = { ...review, failure: { byClass: { ...review.failure.byClass, export: 'closed', webhook: 'open', health: 'open' } } };
    const md = doc(inputFromAnswers(full));
    expect(answer(rows(md, 'Question', 'Answer'), 'Failure posture')).not.toContain('(assumed)');
    expect(md).not.toContain('failure.byClass.');
  });
});

describe('limit matrix and outbound section', () => {
  it('shows the quota and the assumed backstop as two numbers in the Rate column', () => {
    const md = doc(exampleInput('saas-platform'));
    const matrix = rows(md, 'Rule', 'Applies to');
    const rate = (id: string) => matrix.find((r) => r[0]?.includes(`\`${id}\``))?.[3] ?? '';
    expect(rate('quota-pro')).toBe(
      'quota 1,000,000 / calendar month (Europe/Berlin); refused past 1,200,000 (120% of the quota, an assumed cap), no burst (window)',
    );
    expect(rate('quota-enterprise')).toBe(
      'quota 20,000,000 / calendar month (Europe/Berlin); refused past 60,000,000 (3x the quota, an assumed cap), no burst (window)',
    );
    expect(rate('quota-free')).toBe('10,000 / calendar month (Europe/Berlin), no burst (window)');
    expect(md).toContain('- `plans.overageCap`: Open product decision: Pro and Enterprise let calls pass past the quota');
  });

  it('lists the outbound burst default with its arithmetic and warns about a stated burst over the limit', () => {
    const md = doc(exampleInput('saas-platform'));
    expect(md).toContain('Stripe 10 (10 + 90 = 100 calls per second, exactly the limit of 100/second)');
    const providers = rows(md, 'Provider', 'Documented limit');
    expect(providers.find((r) => r[0] === 'Stripe')?.[4]).toBe('10 (assumed)');
    expect(md).not.toContain('Burst above the provider limit');

    const raw = answersOf('saas-platform') as Record<string, any>;
    const over = doc(inputFromAnswers({ ...raw, outbound: [{ name: 'Stripe', limit: { requests: 100, per: 'second' }, burst: 90 }] }));
    expect(over).toContain('**Burst above the provider limit:**');
    expect(over).toContain(
      '- Stripe: burst 90 + 90 refilled per 1 s = up to 180 calls in 1 s, against a limit of 100/second; lower the burst to at most 10',
    );
  });
});
