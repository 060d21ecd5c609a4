/**
 * The resolver on its own: which source answers a question (flag, previous answers, detected
 * fact, default, prompt), what a run without a terminal does, how the prompt reads, refuses and
 * asks twice, and what a "Keep ...?" offer decides.
 */
import { describe, expect, it } from 'vitest';
import type { AnswersInput } from '../../src/answers/schema.js';
import { UserError } from '../../src/messages.js';
import { parseInitFlags } from '../../src/questionnaire/flags.js';
import { Q } from '../../src/questionnaire/questions.js';
import { offerKnown, resolve } from '../../src/questionnaire/resolve.js';
import { outputPath } from '../../src/questionnaire/steps/output-path.js';
import { stack } from '../../src/questionnaire/steps/stack.js';
import { detectedOf, PREVIOUS_FILE, stepContext } from './support/context.js';
import { DEFAULT, type Entry } from './support/scripted.js';

const FROM = `previous answers in ${PREVIOUS_FILE}`;
const detected = detectedOf({ stack: { framework: 'fastify' }, traffic: { peakRps: 900 } }, { 'stack.framework': 'package.json' });
const previous: AnswersInput = { stack: { framework: 'express' }, traffic: { peakRps: 50 } };

describe('which source answers', () => {
  const cases: {
    name: string;
    flags?: Record<string, string>;
    previous?: AnswersInput;
    interactive?: boolean;
    script?: Entry[];
    value: unknown;
    source: string | undefined;
  }[] = [
    { name: 'a flag wins over everything', flags: { framework: 'koa' }, previous, value: 'koa', source: 'flag' },
    { name: 'a flag of "unknown" is an answer too', flags: { framework: 'unknown' }, previous, value: 'unknown', source: 'flag' },
    { name: 'then the previous answer, over the detected fact', previous, value: 'express', source: 'previous' },
    { name: 'then the detected fact', value: 'fastify', source: 'detected' },
    {
      name: 'in a terminal the known value is the default, named with its source',
      interactive: true,
      previous,
      script: [{ select: `Which web framework serves the API? (default: express, from ${FROM})`, answer: DEFAULT }],
      value: 'express',
      source: 'prompt',
    },
    {
      name: 'the flag wins in a terminal too, and nothing is asked',
      interactive: true,
      flags: { framework: 'hono' },
      value: 'hono',
      source: 'flag',
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const t = stepContext({
        detected,
        interactive: c.interactive ?? false,
        ...(c.flags ? { flags: c.flags } : {}),
        ...(c.previous ? { previous: c.previous } : {}),
        ...(c.script ? { script: c.script } : {}),
      });
      expect(await resolve(t.ctx, Q.framework)).toEqual({ value: c.value, source: c.source });
      expect(t.prompt.remaining()).toEqual([]);
    });
  }

  it('without a terminal and nothing known: the default, or nothing (the design then states its assumption)', async () => {
    const t = stepContext({ interactive: false });
    expect(await resolve(t.ctx, Q.format)).toEqual({ value: 'html', source: 'default' });
    expect(await resolve(t.ctx, Q.framework)).toEqual({ value: undefined });
    expect(await resolve(t.ctx, Q.peakRps)).toEqual({ value: undefined });
    expect(await stack.run(t.ctx, {})).toEqual({});
  });

  it('a question without a prompt takes its flag, else what is known, and is never asked', async () => {
    const t = stepContext({ previous: { output: { layout: 'folder' } } });
    expect(await resolve(t.ctx, Q.layout)).toEqual({ value: 'folder', source: 'previous' });
    expect(await resolve(stepContext({ flags: { layout: 'single' } }).ctx, Q.layout)).toEqual({ value: 'single', source: 'flag' });
    expect(await resolve(stepContext().ctx, Q.layout)).toEqual({ value: undefined });
  });
});

describe('a previous value that cannot be used falls through', () => {
  it('to the default: a document path that is no path; to nothing: an instance count --topology single contradicts', async () => {
    const path = stepContext({ interactive: false, previous: { output: { path: 'docs/\u0001.md' } } });
    expect(await outputPath.run(path.ctx, { output: { format: 'html' } })).toEqual({ output: { path: 'docs/rate-limit-design.html' } });
    const moved = stepContext({ interactive: false, previous: { output: { path: 'docs/limits.md' } } });
    expect(await outputPath.run(moved.ctx, { output: { format: 'html' } })).toEqual({ output: { path: 'docs/limits.html' } });
    const single = stepContext({
      interactive: false,
      previous: { stack: { topology: 'horizontal', instances: 6 } },
      flags: { topology: 'single' },
    });
    expect(await stack.run(single.ctx, {})).toEqual({ stack: { topology: 'single' } });
  });
});

describe('bad flag values', () => {
  it('stop the run with exit 2, naming the flag and what is allowed', () => {
    const cases: [Record<string, string | string[]>, string][] = [
      [{ framework: 'spring' }, 'Option --framework: "spring" is not one of express, fastify, koa, hono, nestjs, other'],
      [{ goals: 'speed,abuse' }, 'Option --goals: "speed" is not one of overload, abuse, fairness, quotas'],
      [{ peakRps: '-3' }, 'Option --peak-rps: -3 must be greater than 0, e.g. 600'],
      [
        { plan: ['free'] },
        'Option --plan: "free" should be NAME:RATE[:QUOTA], e.g. "free:60/minute:10000" (QUOTA is requests per quota period)',
      ],
      [{ codeDir: 'unknown\u0007' }, 'Option --code-dir: must not contain control characters'],
      [{ quotaDays: 'unknown' }, 'Option --quota-days: "unknown" is not a number: type digits only, e.g. 30'],
    ];
    for (const [raw, message] of cases) {
      let error: unknown;
      try {
        parseInitFlags(raw);
      } catch (e) {
        error = e;
      }
      expect(error, message).toBeInstanceOf(UserError);
      expect((error as UserError).exitCode).toBe(2);
      expect((error as UserError).message).toBe(message);
    }
  });
});

describe('the prompt', () => {
  it('reads with the flag rules: a refusal says what is allowed and how to give none; "unknown" clears a default', async () => {
    const t = stepContext({
      previous: { traffic: { peakRps: 50 } },
      script: [
        { input: `Peak requests per second? (e.g. 600; unknown to clear) (default from ${FROM})`, answer: '1.5e' },
        { input: 'Peak requests per second?', answer: 'unknown' },
      ],
    });
    expect(await resolve(t.ctx, Q.peakRps)).toEqual({ value: 'unknown', source: 'prompt' });
    expect(t.prompt.asked[0]?.default).toBe('50');
    expect(t.prompt.rejected).toEqual(['"1.5e" is not a number: type digits only, e.g. 600, or type unknown to clear it']);
  });

  it('asks a critical question once more after examples, but not after a "don\'t know" that repeats a previous one', async () => {
    const twice = stepContext({
      script: [
        { select: 'Is Redis', answer: 'unknown' },
        { select: 'Asking once more: is Redis', answer: 'valkey' },
      ],
    });
    expect(await resolve(twice.ctx, Q.store)).toEqual({ value: 'valkey', source: 'prompt' });
    expect(twice.said[0]).toBe('Examples, to help decide:');
    const again = stepContext({
      previous: { unknown: ['goals'] },
      script: [{ checkbox: `protect against? (space to pick, enter when done) (default: don't know, from ${FROM})`, answer: DEFAULT }],
    });
    expect(await resolve(again.ctx, Q.goals, { known: 'unknown', from: 'unknown' })).toEqual({ value: 'unknown', source: 'prompt' });
    expect(again.prompt.remaining()).toEqual([]);
  });

  it('a kept offer answers without asking; kept previous answers finish the step, kept detected facts leave the rest asked', async () => {
    const offers = [{ q: Q.framework }, { q: Q.store }];
    const keep: Entry[] = [{ confirm: 'Keep: framework fastify (package.json)?', answer: true }];
    const fromDetection = stepContext({ detected, script: keep });
    expect(await offerKnown(fromDetection.ctx, (l) => `Keep: ${l}?`, offers)).toEqual({ use: true, ask: true });
    const fromPrevious = stepContext({ previous, script: [{ confirm: `Keep: framework express (${FROM})?`, answer: true }] });
    expect(await offerKnown(fromPrevious.ctx, (l) => `Keep: ${l}?`, offers)).toEqual({ use: true, ask: false });
    const flagged = stepContext({ detected, flags: { framework: 'koa' } });
    expect(await offerKnown(flagged.ctx, (l) => `Keep: ${l}?`, offers)).toEqual({ use: false, ask: true });
    expect(await offerKnown(stepContext({ detected, interactive: false }).ctx, (l) => `Keep: ${l}?`, offers)).toEqual({
      use: true,
      ask: false,
    });
  });
});
