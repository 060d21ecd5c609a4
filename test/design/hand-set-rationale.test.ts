/**
 * A rules entry that sets a generated row's numbers by hand: the row no longer explains them
 * from the traffic figures, and the rows sized from a ceiling set by hand say they follow it.
 */
import { describe, expect, it } from 'vitest';
import type { Answers } from '../../src/answers/schema.js';
import { buildDesign } from '../../src/design/build.js';
import { exampleAnswers } from '../helpers/examples.js';

const DATE = '2026-12-02';
const rule = (a: Answers, id: string) => buildDesign(a, { date: DATE }).rules.find((r) => r.id === id);

describe('a rules entry that overrides a generated row', () => {
  it("replaces the row's generated reasoning for the numbers it sets, and names the entry in the derivation", () => {
    const a = {
      ...exampleAnswers('saas-platform'),
      rules: [{ id: 'webhooks-per-source', rate: { requests: 40, per: 'second' } }],
    } as Answers;
    const generated = rule(exampleAnswers('saas-platform'), 'webhooks-per-source');
    const r = rule(a, 'webhooks-per-source');
    expect(r?.rate).toMatchObject({ requests: 40, periodSeconds: 1 });
    expect(r?.rationale).toContain('set by hand in the answers (its rules entry states rate 40 / 1 s)');
    expect(r?.rationale).not.toContain(generated?.rationale?.slice(0, 60));
    expect(r?.rationale).not.toContain('a fifth of the');
    expect(r?.derivation).toMatch(/^rate 40 \/ 1 s = stated in its rules entry, in place of 500 req\/s = a fifth/);
  });

  it('keeps the generated reasoning when the entry sets no number, naming what it sets', () => {
    const a = { ...exampleAnswers('saas-platform'), rules: [{ id: 'webhooks-per-source', failMode: 'closed' }] } as Answers;
    const generated = rule(exampleAnswers('saas-platform'), 'webhooks-per-source');
    const r = rule(a, 'webhooks-per-source');
    expect(r?.rationale?.startsWith(generated?.rationale?.split(' Enforced')[0] ?? '?')).toBe(true);
    expect(r?.rationale).toContain('Its rules entry in the answers sets failMode by hand.');
  });
});

describe('a ceiling set by hand', () => {
  it('sizes the rows derived from it from the hand-set rate, and they say so', () => {
    const a = { ...exampleAnswers('saas-platform'), rules: [{ id: 'global-ceiling', rate: { requests: 300, per: 'second' } }] } as Answers;
    const webhooks = rule(a, 'webhooks-per-source');
    // a fifth of the 300 req/s ceiling set by hand: 60 req/s, rounded down to 50, not a fifth of the 4,800 the traffic gives
    expect(webhooks?.rate).toMatchObject({ requests: 50, periodSeconds: 1 });
    expect(webhooks?.rationale).toContain('a fifth of the 300 req/s ceiling (set by hand in its rules entry)');
    expect(webhooks?.derivation).toContain('a fifth of the 300 req/s ceiling (set by hand in its rules entry)');
    expect(rule(a, 'anonymous-per-ip')?.derivation).toContain(
      'capped at a tenth of the 300 req/s ceiling (set by hand in its rules entry)',
    );
    // the traffic figures still give the ceiling's own "in place of" text
    expect(rule(a, 'global-ceiling')?.derivation).toContain('300 req/s = stated in its rules entry, in place of 4,800 req/s');
  });
});
