/**
 * The previous answers file as the interview's defaults: the layer (previous answer over
 * detected fact, field by field), what is carried over untouched, and every step offering
 * its previous value, with and without a terminal.
 */
import { describe, expect, it } from 'vitest';
import { Answers, type AnswersInput } from '../../src/answers/schema.js';
import { UNKNOWN } from '../../src/questionnaire/context.js';
import { detectProject } from '../../src/questionnaire/detect/index.js';
import { parseInitFlags, type InitRawOptions } from '../../src/questionnaire/flags.js';
import { answersText, detectedFrom, finishAnswers, runInterview } from '../../src/questionnaire/interview.js';
import { carriedOver, changedFields, stepFields, withPrevious } from '../../src/questionnaire/previous.js';
import { refusingPrompter } from '../../src/questionnaire/prompt.js';
import { plans } from '../../src/questionnaire/steps/plans.js';
import { STEPS } from '../../src/questionnaire/steps/index.js';
import { fixture } from './detect/fixtures.js';
import { detectedOf, PREVIOUS_FILE, stepContext } from './support/context.js';
import { PREVIOUS } from './support/previous.js';
import { DEFAULT, scripted, type Entry, type ScriptedPrompter } from './support/scripted.js';

const FROM = `previous answers in ${PREVIOUS_FILE}`;
const previous = Answers.parse(PREVIOUS);

/** The whole interview with the fixture as the previous answers, over what fastify-openapi's files say. */
async function interview(options: { interactive: boolean; script?: Entry[]; flags?: InitRawOptions; previous?: AnswersInput }) {
  const detection = await detectProject(fixture('fastify-openapi'));
  const prompt = options.interactive ? scripted(options.script ?? []) : refusingPrompter();
  const said: string[] = [];
  const draft = await runInterview({
    prompt,
    interactive: options.interactive,
    flags: parseInitFlags(options.flags ?? {}),
    detected: detectedFrom(detection),
    previous: { answers: Answers.parse(options.previous ?? PREVIOUS), file: PREVIOUS_FILE },
    say: (l) => said.push(l),
  });
  // As init does: the project name from a flag, else the previous answers (carried over), else package.json.
  // the scripted prompter's record (interactive runs only read it)
  return {
    answers: finishAnswers(draft, options.previous === undefined ? undefined : 'shop-api'),
    prompt: prompt as ScriptedPrompter,
    said,
  };
}

describe('the previous answers layer', () => {
  it('lays each previous answer over the fact detected for the same field, labelled with the file; the rest is carried over as it was', () => {
    const detected = detectedOf(
      { stack: { framework: 'fastify', store: 'redis' }, identities: ['user'] },
      { 'stack.framework': 'package.json', 'stack.store': 'package.json', identities: 'openapi.yaml' },
    );
    const before = Answers.parse({
      stack: { framework: 'express' },
      traffic: { peakRps: 10, headroom: 2 },
      failure: { byClass: { auth: 'open' } },
      rollout: { shadowDays: 3 },
    });
    const fields = stepFields(STEPS);
    const known = withPrevious(detected, before, 'config/limits.json', fields);
    expect(known.answers.stack).toEqual({ framework: 'express', store: 'redis' });
    expect(known.byField['stack.framework']?.source).toBe('previous answers in config/limits.json');
    expect(known.byField['stack.store']?.source).toBe('package.json');
    expect(known.answers.identities).toEqual(['user']);
    expect(known.answers.traffic).toEqual({ peakRps: 10 });
    // Not asked about, so carried: headroom and rollout; failure.byClass is asked, and the empty failure is dropped.
    expect(carriedOver(before, fields)).toEqual({ traffic: { headroom: 2 }, rollout: { shadowDays: 3 } });
    expect(detected.answers.stack).toEqual({ framework: 'fastify', store: 'redis' });
  });

  it('names the fields that changed, objects member by member, lists as a whole, $schema aside', () => {
    const after = Answers.parse({
      ...PREVIOUS,
      $schema: 'elsewhere',
      traffic: { ...(PREVIOUS.traffic as object), peakRps: 3000 },
      identities: ['ip'],
    });
    expect(changedFields(previous, after)).toEqual(['identities', 'traffic.peakRps']);
    expect(changedFields(previous, Answers.parse(PREVIOUS))).toEqual([]);
  });
});

describe('without a terminal (--yes): flag > previous answer > detected fact > default', () => {
  it('keeps every previous answer, over the detected facts: the same answers, the same text', async () => {
    const { answers } = await interview({ interactive: false });
    expect(answers).toEqual(previous);
    expect(answersText(answers)).toBe(answersText(previous));
    // fastify-openapi's package.json and openapi.yaml say fastify, 14 endpoints and "user": the previous answers win.
    expect(answers.stack?.framework).toBe('express');
    expect(answers.endpoints).toHaveLength(3);
  });

  it('a flag changes its answer and nothing else', async () => {
    const { answers } = await interview({ interactive: false, flags: { peakRps: '3000' } });
    expect(changedFields(previous, answers)).toEqual(['traffic.peakRps']);
    expect(answers.traffic).toEqual({ ...previous.traffic, peakRps: 3000 });
  });

  it('precedence per field: flag, then previous answer, then detected fact, then default', async () => {
    const { answers } = await interview({
      interactive: false,
      previous: { stack: { framework: 'koa', topology: 'single' }, traffic: { peakRps: 50 } },
      flags: { topology: 'horizontal', instances: '3' },
    });
    expect(answers.stack).toEqual({ framework: 'koa', language: 'TypeScript', topology: 'horizontal', instances: 3 }); // koa: previous; TypeScript: detected
    expect(answers.identities).toEqual(['user']); // detected: the previous answers have none
    expect(answers.endpoints).toHaveLength(14);
    expect(answers.traffic).toEqual({ peakRps: 50 });
    expect(answers.output).toEqual({ format: 'html', path: 'docs/rate-limit-design.html' }); // defaults
  });

  it('a previous "don\'t know" on items 1 and 2 is kept over detected facts; a flag replaces it', async () => {
    const unknown = { unknown: ['goals', 'stack'] } as AnswersInput;
    const kept = await interview({ interactive: false, previous: unknown });
    expect(kept.answers.unknown).toEqual(['goals', 'stack']);
    expect(kept.answers.stack).toBeUndefined(); // not the detected fastify
    const replaced = await interview({ interactive: false, previous: unknown, flags: { goals: 'abuse', framework: 'express' } });
    expect(replaced.answers.unknown).toBeUndefined();
    expect(replaced.answers.goals).toEqual(['abuse']);
    expect(replaced.answers.stack).toMatchObject({ framework: 'express', language: 'TypeScript' });
  });

  it('a format flag moves the previous document path to its extension', async () => {
    const { answers } = await interview({ interactive: false, flags: { format: 'html' } });
    expect(changedFields(previous, answers)).toEqual(['output.format', 'output.path']);
    expect(answers.output?.path).toBe('docs/limits.html');
  });

  it('quota flags apply to the previous reset: a time zone replaces its zone; days on a calendar reset are refused', async () => {
    const zone = stepContext({ interactive: false, previous: PREVIOUS as AnswersInput, flags: { quotaTimeZone: 'America/New_York' } });
    expect((await plans.run(zone.ctx, {})).quotas).toEqual({
      reset: { kind: 'calendar', period: 'month', timeZone: 'America/New_York' },
      exhaustion: 'hard',
    });
    const days = stepContext({ interactive: false, previous: PREVIOUS as AnswersInput, flags: { quotaDays: '7' } });
    await expect(plans.run(days.ctx, {})).rejects.toThrow(
      'Option --quota-days: only applies to rolling resets, and the quota resets each calendar month (Europe/Berlin); add --quota-reset rolling',
    );
  });
});

/** The first four questions: asked with the previous value as the default, Enter keeps it. */
const PHASE_0_AND_GOALS: Entry[] = [
  { select: `Format of the design document? (default: Markdown, from ${FROM})`, answer: DEFAULT },
  { input: `Write the document to (default from ${FROM})`, answer: DEFAULT },
  {
    input: `Folder for the generated code (Lua scripts, middleware, gateway config), e.g. src/rate-limit; "none" for none (default from ${FROM}):`,
    answer: DEFAULT,
  },
  {
    checkbox: `What should rate limiting protect against? (space to pick, enter when done) (default: overload, abuse, fairness, quotas, from ${FROM})`,
    answer: DEFAULT,
  },
];

describe('in a terminal: every question offers its previous answer as the default', () => {
  it('Enter everywhere keeps every answer; multi-question items are offered whole, labelled with the file', async () => {
    const script: Entry[] = [
      ...PHASE_0_AND_GOALS,
      {
        confirm: `Keep what was found for the stack: framework express, language TypeScript, topology horizontal, instances 6, gateway nginx, store redis-cluster, trusted proxies 10.20.0.0/16 (${FROM})?`,
        answer: DEFAULT,
      },
      { confirm: `Keep the identities found: api-key, tenant, user, ip (${FROM})? (No to choose them yourself)`, answer: DEFAULT },
      { confirm: 'Use these 3 endpoints?', answer: DEFAULT },
      {
        confirm: `Keep the traffic: typical rps 800, peak rps 2,400, burstiness high, clients 5,000, tenants 1,200, users 90,000 (${FROM})?`,
        answer: DEFAULT,
      },
      {
        confirm: `Keep the promised limits: plans Free 60/minute, quota 10,000; Pro 600/minute, quota 1,000,000, quotas reset each calendar month (Europe/Berlin), when used up hard (${FROM})?`,
        answer: DEFAULT,
      },
      { confirm: `Keep the failure posture (when the store is down): auth closed, read open, export closed (${FROM})?`, answer: DEFAULT },
      { confirm: `Keep the third-party APIs: Stripe 100/second, SendGrid 600/minute (${FROM})?`, answer: DEFAULT },
    ];
    const { answers, prompt, said } = await interview({ interactive: true, script });
    expect(prompt.remaining()).toEqual([]);
    expect(prompt.asked.slice(0, 4).map((a) => a.default)).toEqual([
      'markdown',
      'docs/limits.md',
      'ratelimit',
      ['overload', 'abuse', 'fairness', 'quotas'],
    ]);
    expect(prompt.asked.slice(4).every((a) => a.kind === 'confirm' && a.default === true)).toBe(true);
    expect(said).toContain(`Endpoints in the ${FROM}:`);
    expect(answers).toEqual(previous);
  });

  it('every offer turned down: each question of each item has its previous value as the default, and Enter reproduces the answers', async () => {
    const script: Entry[] = [
      ...PHASE_0_AND_GOALS,
      { confirm: 'Keep what was found for the stack', answer: false },
      { select: `Which web framework serves the API? (default: express, from ${FROM})`, answer: DEFAULT },
      { select: 'TypeScript or JavaScript?', answer: DEFAULT },
      { select: 'How does the API run in production?', answer: DEFAULT },
      { input: 'How many instances at peak?', answer: DEFAULT },
      { select: 'Is there an API gateway', answer: DEFAULT },
      { input: 'How many nginx nodes serve the API?', answer: DEFAULT },
      { select: 'Is Redis', answer: DEFAULT },
      { input: 'Address ranges your nginx tier', answer: DEFAULT },
      { confirm: 'Keep the identities found', answer: false },
      { checkbox: 'What can requests be keyed on?', answer: DEFAULT },
      { confirm: 'Use these 3 endpoints?', answer: false },
      { select: 'Which endpoints need limits of their own', answer: DEFAULT },
      { input: 'Route of the endpoint', answer: DEFAULT },
      { select: 'Method of /v1/auth/login?', answer: DEFAULT },
      { select: 'What kind of endpoint is POST /v1/auth/login?', answer: DEFAULT },
      { confirm: 'Add another endpoint?', answer: DEFAULT },
      { input: 'Route of the endpoint', answer: DEFAULT },
      { select: 'Method of /v1/orders?', answer: DEFAULT },
      { select: 'What kind of endpoint is GET /v1/orders?', answer: DEFAULT },
      { confirm: 'Can GET /v1/orders be called without signing in?', answer: DEFAULT },
      { confirm: 'Add another endpoint?', answer: DEFAULT },
      { input: 'Route of the endpoint', answer: DEFAULT },
      { select: 'Method of /v1/exports?', answer: DEFAULT },
      { select: 'What kind of endpoint is POST /v1/exports?', answer: DEFAULT },
      { confirm: 'Can POST /v1/exports be called without signing in?', answer: DEFAULT },
      { confirm: 'Add another endpoint?', answer: DEFAULT },
      { confirm: 'Keep the traffic', answer: false },
      { input: 'Typical requests per second', answer: DEFAULT },
      { input: 'Peak requests per second', answer: DEFAULT },
      { input: 'can safely serve', answer: DEFAULT },
      { select: 'How bursty', answer: DEFAULT },
      { input: 'distinct clients', answer: DEFAULT },
      { input: 'tenants', answer: DEFAULT },
      { input: 'user accounts', answer: DEFAULT },
      { confirm: 'Keep the promised limits', answer: false },
      { select: 'Have limits been promised', answer: DEFAULT },
      { input: 'Name of plan 1', answer: DEFAULT },
      { input: 'Rate promised on Free', answer: DEFAULT },
      { input: 'Quota on Free', answer: DEFAULT },
      { confirm: 'Add another plan?', answer: DEFAULT },
      { input: 'Name of plan 2', answer: DEFAULT },
      { input: 'Rate promised on Pro', answer: DEFAULT },
      { input: 'Quota on Pro', answer: DEFAULT },
      { confirm: 'Add another plan?', answer: DEFAULT },
      { select: 'When do quotas reset?', answer: DEFAULT },
      { input: 'Time zone', answer: DEFAULT },
      { select: 'uses up the quota', answer: DEFAULT },
      { confirm: 'Keep the failure posture', answer: false },
      { select: "If the limiter's store", answer: DEFAULT },
      { select: 'auth endpoints', answer: DEFAULT },
      { select: 'read endpoints', answer: DEFAULT },
      { select: 'export endpoints', answer: DEFAULT },
      { confirm: 'Keep the third-party APIs', answer: false },
      { select: 'third-party APIs', answer: DEFAULT },
      { input: 'Name of provider 1', answer: DEFAULT },
      { input: 'The limit Stripe sets', answer: DEFAULT },
      { confirm: 'Add another provider?', answer: DEFAULT },
      { input: 'Name of provider 2', answer: DEFAULT },
      { input: 'The limit SendGrid sets', answer: DEFAULT },
      { confirm: 'Add another provider?', answer: DEFAULT },
    ];
    const { answers, prompt } = await interview({ interactive: true, script });
    expect(prompt.remaining()).toEqual([]);
    const defaultOf = (message: string) => prompt.asked.find((a) => a.message.includes(message))?.default;
    expect(defaultOf('How many instances')).toBe('6');
    // left open in the previous answers: Enter leaves the gateway node count open
    expect(defaultOf('How many nginx nodes')).toBeUndefined();
    expect(defaultOf('Typical requests per second')).toBe('800');
    expect(defaultOf('How bursty')).toBe('high');
    expect(defaultOf('Name of plan 2')).toBe('Pro');
    expect(defaultOf('Rate promised on Pro')).toBe('600/minute');
    expect(defaultOf('When do quotas reset?')).toBe('calendar-month');
    expect(defaultOf('Time zone')).toBe('Europe/Berlin');
    expect(defaultOf("If the limiter's store")).toBe('choose');
    expect(defaultOf('export endpoints')).toBe('closed');
    expect(defaultOf('The limit SendGrid sets')).toBe('600/minute');
    // Names, the auth kind, the export's cost, Pro's burst and SendGrid's safety fraction survive being typed again.
    expect(answers).toEqual(previous);
  });

  it('one answer changed at its question: only that answer differs', async () => {
    const script: Entry[] = [
      ...PHASE_0_AND_GOALS,
      { confirm: 'Keep what was found for the stack', answer: DEFAULT },
      { confirm: 'Keep the identities found', answer: DEFAULT },
      { confirm: 'Use these 3 endpoints?', answer: DEFAULT },
      { confirm: 'Keep the traffic', answer: false },
      { input: 'Typical requests per second', answer: DEFAULT },
      { input: 'Peak requests per second', answer: '3000' },
      { input: 'can safely serve', answer: DEFAULT },
      { select: 'How bursty', answer: DEFAULT },
      { input: 'distinct clients', answer: 'unknown' },
      { input: 'tenants', answer: DEFAULT },
      { input: 'user accounts', answer: DEFAULT },
      { confirm: 'Keep the promised limits', answer: DEFAULT },
      { confirm: 'Keep the failure posture', answer: DEFAULT },
      { confirm: 'Keep the third-party APIs', answer: DEFAULT },
    ];
    const { answers, prompt } = await interview({ interactive: true, script });
    expect(prompt.remaining()).toEqual([]);
    expect(changedFields(previous, answers)).toEqual(['traffic.peakRps', 'traffic.distinctClients']);
    expect(answers.traffic?.peakRps).toBe(3000);
    expect(answers.traffic?.distinctClients).toBeUndefined(); // "unknown" clears a previous value
  });

  it('a previous "don\'t know" on items 1 and 2 is pre-picked, and keeping it asks nothing more', async () => {
    const { answers, prompt } = await interview({
      interactive: true,
      previous: { output: { format: 'html', path: 'docs/d.html' }, unknown: ['goals', 'stack'], identities: [], plans: [], outbound: [] },
      script: [
        { select: 'Format of the design document?', answer: DEFAULT },
        { input: 'Write the document to', answer: DEFAULT },
        { input: 'Folder for the generated code', answer: DEFAULT },
        {
          checkbox: `What should rate limiting protect against? (space to pick, enter when done) (default: don't know, from ${FROM})`,
          answer: DEFAULT,
        },
        { confirm: `Keep what was found for the stack: framework don't know (${FROM})?`, answer: DEFAULT },
        { checkbox: 'What can requests be keyed on?', answer: [UNKNOWN] },
        { confirm: 'Use these 14 endpoints?', answer: DEFAULT },
        { input: 'Typical', answer: DEFAULT },
        { input: 'Peak', answer: DEFAULT },
        { input: 'safely serve', answer: DEFAULT },
        { select: 'bursty', answer: UNKNOWN },
        { input: 'distinct clients', answer: DEFAULT },
        { input: 'user accounts', answer: DEFAULT },
        { confirm: `Keep the promised limits: plans none (${FROM})?`, answer: DEFAULT },
        { select: "If the limiter's store", answer: DEFAULT },
        { confirm: `Keep the third-party APIs: none (${FROM})?`, answer: DEFAULT },
      ],
    });
    expect(prompt.remaining()).toEqual([]);
    expect(prompt.asked.filter((a) => a.message.includes('Asking once more'))).toEqual([]);
    expect(answers.unknown).toEqual(['goals', 'stack']);
    expect(answers.stack).toBeUndefined();
    expect(answers.output).toEqual({ format: 'html', path: 'docs/d.html' });
    expect(answers.plans).toEqual([]);
    expect(answers.outbound).toEqual([]);
  });
});
