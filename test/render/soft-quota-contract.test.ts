/**
 * The document's response contract for a plan that lets calls pass past its quota: the
 * refusal at the hard stop is shown with the design's own numbers, its body fields are
 * explained, and the quota headers say they count to the hard stop.
 */
import { describe, expect, it } from 'vitest';
import { renderMarkdown } from '../../src/render/markdown/index.js';
import { answersOf, exampleInput, inputFromAnswers } from './fixtures.js';

function single(input: ReturnType<typeof exampleInput>): string {
  return renderMarkdown(input, { layout: 'single' })[0]?.content ?? '';
}

/** The fenced block of the response contract that shows the 429 of `ruleId`. */
function refusalOf(doc: string, ruleId: string): string {
  const at = doc.indexOf(`\`${ruleId}\`: the overage allowance used up`);
  expect(at, `no refusal example for ${ruleId}`).toBeGreaterThan(0);
  const start = doc.indexOf('```http\n', at);
  return doc.slice(start, doc.indexOf('\n```\n', start));
}

describe("the response contract states a soft quota's refusal at its hard stop", () => {
  const input = exampleInput('saas-platform');
  const doc = single(input);

  it('shows the 429 of quota-pro with its plan quota, hard stop and overage allowance', () => {
    const pro = input.design.rules.find((r) => r.id === 'quota-pro');
    expect(pro?.quotaBackstop?.quota).toBe(1000000);
    expect(pro?.rate?.requests).toBe(1200000);
    const block = refusalOf(doc, 'quota-pro');
    expect(block).toContain('RateLimit-Policy: "quota-pro";q=1200000;w=2592000');
    expect(block).toContain('RateLimit: "quota-pro";r=0;t=86400');
    expect(block).toContain('"quota": 1000000,');
    expect(block).toContain('"hardStop": 1200000,');
    expect(block).toContain('"overageAllowance": 200000,');
    expect(block).toContain(
      '"detail": "The overage allowance of the quota quota-pro for this period is used up: the plan quota is 1000000, calls past it pass up to the hard stop at 1200000',
    );
    expect(doc).toContain('the overage allowance used up (1,200,000 calls, the hard stop above the plan quota of 1,000,000)');
  });

  it('explains each field of that body and what the headers count to', () => {
    const text = doc.replace(/\s+/g, ' ');
    expect(text).toContain('`limit.quota` is the plan quota');
    expect(text).toContain('`limit.hardStop` the count at which calls are refused');
    expect(text).toContain('`limit.overageAllowance` the calls past the quota that pass before the hard stop');
    expect(text).toContain('says that the overage allowance is used up, not the quota');
    expect(text).toContain('state the hard stop as its limit, so the remaining count reaches 0 only when the next call would be refused');
    expect(text).toContain('(Pro: quota 1,000,000, refused at 1,200,000) the count is the hard stop');
    expect(text).not.toContain('remaining count reads 0');
  });

  it('says none of it for a design whose plans all refuse at their quota', () => {
    const raw = answersOf('saas-platform') as { plans: Record<string, unknown>[] };
    const hard = single(inputFromAnswers({ ...raw, plans: raw.plans.map((p) => ({ ...p, exhaustion: 'hard' })) }));
    expect(hard).not.toContain('hardStop');
    expect(hard).not.toContain('overage allowance');
    expect(hard).toContain('"code": "QUOTA_EXCEEDED"');
  });
});
