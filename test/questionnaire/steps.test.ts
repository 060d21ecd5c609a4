import { describe, expect, it } from 'vitest';
import { UNKNOWN } from '../../src/questionnaire/context.js';
import { UnexpectedPrompt } from '../../src/questionnaire/prompt.js';
import { codeDir } from '../../src/questionnaire/steps/code-dir.js';
import { endpoints } from '../../src/questionnaire/steps/endpoints.js';
import { failure } from '../../src/questionnaire/steps/failure.js';
import { GOALS_EXAMPLES, goals } from '../../src/questionnaire/steps/goals.js';
import { identities } from '../../src/questionnaire/steps/identities.js';
import { STEPS } from '../../src/questionnaire/steps/index.js';
import { outbound } from '../../src/questionnaire/steps/outbound.js';
import { outputFormat } from '../../src/questionnaire/steps/output-format.js';
import { outputPath } from '../../src/questionnaire/steps/output-path.js';
import { plans } from '../../src/questionnaire/steps/plans.js';
import { STACK_EXAMPLES, stack } from '../../src/questionnaire/steps/stack.js';
import { traffic } from '../../src/questionnaire/steps/traffic.js';
import { DEFAULT, type Entry } from './support/scripted.js';
import { detectedOf, stepContext } from './support/context.js';

describe('the steps, in order', () => {
  it('ask Phase 0 first, then items 1-7', () => {
    expect(STEPS.map((s) => s.id)).toEqual([
      'output-format',
      'output-path',
      'code-dir',
      'goals',
      'stack',
      'identities',
      'endpoints',
      'traffic',
      'plans',
      'failure',
      'outbound',
      'existing',
    ]);
    expect(STEPS.filter((s) => s.item !== undefined).map((s) => s.item)).toEqual([1, 2, 3, 3, 4, 5, 6, 7]);
  });
});

describe('Phase 0: format, path, code folder', () => {
  it('format: flag, then the non-interactive default (html), then the prompt', async () => {
    const flagged = stepContext({ flags: { format: 'md' } });
    expect(await outputFormat.run(flagged.ctx, {})).toEqual({ output: { format: 'markdown' } });
    expect(flagged.prompt.asked).toEqual([]);
    expect(await outputFormat.run(stepContext({ interactive: false }).ctx, {})).toEqual({ output: { format: 'html' } });
    const asked = stepContext({ script: [{ select: 'Format of the design document?', answer: DEFAULT }] });
    expect(await outputFormat.run(asked.ctx, {})).toEqual({ output: { format: 'html' } });
    expect(asked.prompt.asked[0]?.choices).toEqual(['html', 'markdown']);
  });

  it('path: suggested from the format, confirmed or changed; a name of the other format is refused', async () => {
    const t = stepContext({ script: [{ input: 'Write the document to', answer: DEFAULT }] });
    expect(await outputPath.run(t.ctx, { output: { format: 'markdown' } })).toEqual({ output: { path: 'docs/rate-limit-design.md' } });
    expect(t.prompt.asked[0]?.default).toBe('docs/rate-limit-design.md');

    const changed = stepContext({
      script: [
        { input: 'Write the document to', answer: 'design/limits.md' },
        { input: 'Write the document to', answer: 'design/limits.html' },
      ],
    });
    expect(await outputPath.run(changed.ctx, { output: { format: 'html' } })).toEqual({ output: { path: 'design/limits.html' } });
    expect(changed.prompt.rejected).toEqual([
      '"design/limits.md" is a .md name but the document is HTML: end it in .html, or give a folder.',
    ]);

    expect(await outputPath.run(stepContext({ interactive: false }).ctx, { output: { format: 'html' } })).toEqual({
      output: { path: 'docs/rate-limit-design.html' },
    });
    expect(await outputPath.run(stepContext({ flags: { out: 'x/y.html' } }).ctx, {})).toEqual({ output: { path: 'x/y.html' } });
  });

  it('code folder: optional; empty or none means no code', async () => {
    expect(await codeDir.run(stepContext({ script: [{ input: 'Folder for the generated code', answer: '' }] }).ctx, {})).toEqual({});
    expect(await codeDir.run(stepContext({ script: [{ input: 'Folder for the generated code', answer: 'src/rl' }] }).ctx, {})).toEqual({
      output: { codeDir: 'src/rl' },
    });
    expect(await codeDir.run(stepContext({ flags: { codeDir: 'none' } }).ctx, {})).toEqual({});
    expect(await codeDir.run(stepContext({ interactive: false }).ctx, {})).toEqual({});
  });
});

describe('item 1, goals: the partial-context protocol', () => {
  it('a first "don\'t know" asks once more with examples; a second one records unknown and never asks a third time', async () => {
    const t = stepContext({
      script: [
        { checkbox: 'What should rate limiting protect against?', answer: [UNKNOWN] },
        { checkbox: 'Asking once more', answer: [UNKNOWN] },
      ],
    });
    expect(await goals.run(t.ctx, {})).toEqual({ unknown: ['goals'] });
    expect(t.prompt.asked).toHaveLength(2);
    expect(t.said).toEqual(GOALS_EXAMPLES);
    expect(t.prompt.remaining()).toEqual([]);
  });

  it('an answer on the second ask is kept', async () => {
    const t = stepContext({
      script: [
        { checkbox: 'What should rate limiting protect against?', answer: [UNKNOWN] },
        { checkbox: 'Asking once more', answer: ['abuse', 'quotas'] },
      ],
    });
    expect(await goals.run(t.ctx, {})).toEqual({ goals: ['abuse', 'quotas'] });
  });

  it('the checkbox needs a choice, and "don\'t know" alone', async () => {
    const t = stepContext({
      script: [
        { checkbox: 'protect against', answer: [] },
        { checkbox: 'protect against', answer: ['overload', UNKNOWN] },
        { checkbox: 'protect against', answer: ['overload'] },
      ],
    });
    expect(await goals.run(t.ctx, {})).toEqual({ goals: ['overload'] });
    expect(t.prompt.rejected).toEqual([
      'Pick at least one with space, or pick "Don\'t know".',
      '"Don\'t know" cannot be combined with other choices: unpick one of them.',
    ]);
  });

  it('flags answer without asking; without a TTY goals stay unknown (generic design)', async () => {
    expect(await goals.run(stepContext({ flags: { goals: 'overload,abuse' } }).ctx, {})).toEqual({ goals: ['overload', 'abuse'] });
    expect(await goals.run(stepContext({ flags: { goals: 'unknown' } }).ctx, {})).toEqual({ unknown: ['goals'] });
    expect(await goals.run(stepContext({ interactive: false }).ctx, {})).toEqual({});
  });
});

describe('item 2, stack', () => {
  const detected = detectedOf(
    { stack: { framework: 'express', language: 'JavaScript', store: 'redis' } },
    { 'stack.framework': 'package.json', 'stack.store': 'package.json' },
  );

  it('shows what was detected, and once confirmed asks only the rest', async () => {
    const t = stepContext({
      detected,
      script: [
        {
          confirm: 'Keep what was found for the stack: framework express (package.json), language JavaScript, store redis (package.json)?',
          answer: true,
        },
        { select: 'How does the API run in production?', answer: 'horizontal' },
        { input: 'How many instances at peak?', answer: 'six' },
        { input: 'How many instances at peak?', answer: '6' },
        { select: 'API gateway or reverse proxy', answer: 'nginx' },
        { input: 'How many nginx nodes serve the API?', answer: '0' },
        { input: 'How many nginx nodes serve the API?', answer: '2.5' },
        { input: 'How many nginx nodes serve the API?', answer: DEFAULT },
        { input: 'Address ranges your nginx tier sends from', answer: '10.0.0.0/33' },
        { input: 'Address ranges your nginx tier sends from', answer: '10.0.0.0/8, 172.16.0.0/12' },
      ],
    });
    expect(await stack.run(t.ctx, {})).toEqual({
      stack: {
        framework: 'express',
        language: 'JavaScript',
        topology: 'horizontal',
        instances: 6,
        gateway: 'nginx',
        gatewayNodes: 6,
        store: 'redis',
        trustedProxies: ['10.0.0.0/8', '172.16.0.0/12'],
      },
    });
    // the node count offers what the design assumes without one: one nginx node per instance
    const nodes = t.prompt.asked.find((a) => a.message.startsWith('How many nginx nodes'));
    expect(nodes?.default).toBe('6');
    expect(nodes?.message).toContain('(one per application instance by default):');
    expect(t.prompt.rejected).toEqual([
      '"six" is not a number: type digits only, e.g. 6, or leave it empty if unsure',
      '0 must be greater than 0, e.g. 3, or type unknown to clear it',
      '2.5 must be a whole number, e.g. 3, or type unknown to clear it',
      '"10.0.0.0/33" must be an IPv4 or IPv6 address or CIDR, e.g. 10.0.0.0/8 or fd00::/8',
    ]);
  });

  it('when the detected stack is rejected, every question is asked with the detected value as its default', async () => {
    const t = stepContext({
      detected,
      script: [
        { confirm: 'Keep what was found', answer: false },
        { select: 'Which web framework serves the API?', answer: 'fastify' },
        { select: 'TypeScript or JavaScript?', answer: 'TypeScript' },
        { select: 'How does the API run', answer: 'single' },
        { select: 'API gateway', answer: 'none' },
        { select: 'Is Redis', answer: DEFAULT },
      ],
    });
    expect(await stack.run(t.ctx, {})).toEqual({
      stack: { framework: 'fastify', language: 'TypeScript', topology: 'single', gateway: 'none', store: 'redis' },
    });
    expect(t.prompt.asked[1]?.default).toBe('express');
    expect(t.prompt.asked[5]?.default).toBe('redis');
  });

  it('framework "don\'t know" twice: unknown stack, generic design, no more stack questions', async () => {
    const t = stepContext({
      script: [
        { select: 'Which web framework serves the API?', answer: UNKNOWN },
        { select: 'Asking once more: which web framework', answer: UNKNOWN },
      ],
    });
    expect(await stack.run(t.ctx, {})).toEqual({ unknown: ['stack'] });
    expect(t.said).toEqual(STACK_EXAMPLES.framework);
    expect(t.prompt.remaining()).toEqual([]);
  });

  it('other critical questions are asked at most twice; a second "don\'t know" leaves the field out', async () => {
    const t = stepContext({
      script: [
        { select: 'Which web framework', answer: 'other' },
        { input: 'Which language', answer: 'Go' },
        { select: 'How does the API run', answer: UNKNOWN },
        { select: 'Asking once more: does the API run as one instance or several?', answer: UNKNOWN },
        { select: 'API gateway', answer: UNKNOWN },
        { select: 'Asking once more: is there an API gateway', answer: 'kong' },
        { input: 'How many Kong nodes serve the API?', answer: 'unknown' },
        { select: 'Is Redis', answer: 'valkey' },
        { input: 'Address ranges your kong tier', answer: '' },
      ],
    });
    expect(await stack.run(t.ctx, {})).toEqual({ stack: { framework: 'other', language: 'Go', gateway: 'kong', store: 'valkey' } });
    expect(t.said).toEqual([...STACK_EXAMPLES.topology, ...STACK_EXAMPLES.gateway]);
    // topology unknown: the design assumes 3 instances, so 3 Kong nodes is the offered default
    expect(t.prompt.asked.find((a) => a.message.startsWith('How many Kong nodes'))?.default).toBe('3');
  });

  it('asks how many gateway nodes share the ceiling only behind nginx, Envoy or Kong', async () => {
    const behind = async (gateway: string, topology: string, after: Entry[] = [], before: Entry[] = []) => {
      const t = stepContext({
        flags: { framework: 'express', language: 'TypeScript', topology, store: 'redis', trustedProxies: 'none' },
        script: [...before, { select: 'API gateway', answer: gateway }, ...after],
      });
      const out = await stack.run(t.ctx, {});
      expect(t.prompt.remaining()).toEqual([]);
      return { stack: out.stack, asked: t.prompt.asked };
    };
    // one instance: one node by default, and Enter writes it
    const single = await behind('envoy', 'single', [{ input: 'How many Envoy nodes serve the API?', answer: DEFAULT }]);
    expect(single.stack?.gatewayNodes).toBe(1);
    expect(single.asked.at(-1)?.default).toBe('1');
    const typed = await behind(
      'nginx',
      'horizontal',
      [{ input: 'How many nginx nodes serve the API?', answer: '2' }],
      [{ input: 'How many instances', answer: '4' }],
    );
    expect(typed.stack).toMatchObject({ instances: 4, gateway: 'nginx', gatewayNodes: 2 });
    // Cloudflare, AWS API Gateway and no gateway count for the whole fleet: not asked
    for (const gateway of ['cloudflare', 'aws-api-gateway', 'none']) {
      const { stack: s, asked } = await behind(gateway, 'single');
      expect(s?.gatewayNodes, gateway).toBeUndefined();
      expect(
        asked.some((a) => a.message.includes('nodes serve the API')),
        gateway,
      ).toBe(false);
    }
  });

  it('--gateway-nodes answers it; without a TTY it stays out (the design states its assumption); off a per-node gateway it is dropped', async () => {
    const flags = {
      framework: 'express',
      language: 'TypeScript',
      topology: 'horizontal',
      instances: '4',
      store: 'redis',
      trustedProxies: 'none',
    };
    const flagged = stepContext({ flags: { ...flags, gateway: 'kong', gatewayNodes: '2' } });
    expect((await stack.run(flagged.ctx, {})).stack?.gatewayNodes).toBe(2);
    expect(flagged.prompt.asked).toEqual([]);
    const quiet = stepContext({ interactive: false, flags: { ...flags, gateway: 'nginx' } });
    expect((await stack.run(quiet.ctx, {})).stack).not.toHaveProperty('gatewayNodes');
    const off = stepContext({ interactive: false, flags: { ...flags, gateway: 'cloudflare', gatewayNodes: '2' } });
    expect((await stack.run(off.ctx, {})).stack).not.toHaveProperty('gatewayNodes');
    expect(off.said.join('\n')).toContain('--gateway-nodes is not used');
  });

  it('flags beat detected facts and are not confirmed; without a TTY detected facts are used as they are', async () => {
    const t = stepContext({
      detected,
      flags: { framework: 'koa', store: 'none', topology: 'single', gateway: 'none', language: 'TypeScript' },
    });
    expect(await stack.run(t.ctx, {})).toEqual({
      stack: { framework: 'koa', language: 'TypeScript', topology: 'single', gateway: 'none', store: 'none' },
    });
    expect(t.prompt.asked).toEqual([]);

    const quiet = stepContext({ detected, interactive: false });
    expect(await stack.run(quiet.ctx, {})).toEqual({ stack: { framework: 'express', language: 'JavaScript', store: 'redis' } });
    expect(await stack.run(stepContext({ interactive: false, flags: { instances: '4' } }).ctx, {})).toEqual({
      stack: { topology: 'horizontal', instances: 4 },
    });
    expect(await stack.run(stepContext({ interactive: false, flags: { framework: 'unknown' } }).ctx, {})).toEqual({ unknown: ['stack'] });
  });
});

describe('item 3, identities and endpoints', () => {
  it('identities: detected ones are confirmed; "don\'t know" leaves them out', async () => {
    const detected = detectedOf({ identities: ['user'] }, { identities: 'openapi.yaml' });
    const kept = stepContext({ detected, script: [{ confirm: 'Keep the identities found: user (openapi.yaml)?', answer: true }] });
    expect(await identities.run(kept.ctx, {})).toEqual({ identities: ['user'] });
    const changed = stepContext({
      detected,
      script: [
        { confirm: 'Keep the identities found', answer: false },
        { checkbox: 'What can requests be keyed on?', answer: ['user', 'tenant'] },
      ],
    });
    expect(await identities.run(changed.ctx, {})).toEqual({ identities: ['user', 'tenant'] });
    expect(changed.prompt.asked[1]?.default).toEqual(['user']);
    expect(await identities.run(stepContext({ script: [{ checkbox: 'keyed on', answer: [UNKNOWN] }] }).ctx, {})).toEqual({});
    expect(await identities.run(stepContext({ detected, interactive: false }).ctx, {})).toEqual({ identities: ['user'] });
  });

  const found = [
    {
      name: 'login',
      method: 'POST' as const,
      route: '/v1/auth/login',
      class: 'auth' as const,
      authKind: 'login' as const,
      anonymous: true,
    },
    { name: 'listOrders', method: 'GET' as const, route: '/v1/orders', class: 'read' as const, anonymous: false },
  ];

  it('endpoints: detected ones are listed with their source and confirmed', async () => {
    const t = stepContext({
      detected: detectedOf({ endpoints: found }, { endpoints: 'openapi.yaml' }),
      script: [{ confirm: 'Use these 2 endpoints?', answer: true }],
    });
    expect(await endpoints.run(t.ctx, {})).toEqual({ endpoints: found });
    expect(t.said[0]).toBe('Endpoints found in openapi.yaml:');
    expect(t.said[1]).toMatch(/POST\s+\/v1\/auth\/login\s+auth \(login\)/);
  });

  it('endpoints: added by hand, the class guessed from the route as the default', async () => {
    const t = stepContext({
      script: [
        { select: 'Which endpoints need limits of their own', answer: 'add' },
        { input: 'Route of the endpoint', answer: 'login' },
        { input: 'Route of the endpoint', answer: '/v1/login' },
        { select: 'Method of /v1/login?', answer: 'POST' },
        { select: 'What kind of endpoint is POST /v1/login?', answer: DEFAULT },
        { confirm: 'Add another endpoint?', answer: true },
        { input: 'Route of the endpoint', answer: '/v1/search' },
        { select: 'Method of /v1/search?', answer: 'GET' },
        { select: 'What kind of endpoint is GET /v1/search?', answer: DEFAULT },
        { confirm: 'Can GET /v1/search be called without signing in?', answer: true },
        { confirm: 'Add another endpoint?', answer: false },
      ],
    });
    expect(await endpoints.run(t.ctx, {})).toEqual({
      endpoints: [
        { name: 'POST /v1/login', method: 'POST', route: '/v1/login', class: 'auth', authKind: 'login', anonymous: true },
        { name: 'GET /v1/search', method: 'GET', route: '/v1/search', class: 'search', anonymous: true },
      ],
    });
    expect(t.prompt.rejected).toEqual(['"login" must start with "/", e.g. /v1/orders/:id']);
  });

  it('endpoints: skipped, flagged, or none (skip and none are recorded as an empty list; "don\'t know" leaves them out)', async () => {
    expect(await endpoints.run(stepContext({ script: [{ select: 'Which endpoints', answer: 'skip' }] }).ctx, {})).toEqual({
      endpoints: [],
    });
    expect(await endpoints.run(stepContext({ script: [{ select: 'Which endpoints', answer: UNKNOWN }] }).ctx, {})).toEqual({});
    expect(await endpoints.run(stepContext({ flags: { endpoint: ['export=GET /v1/export export'] } }).ctx, {})).toEqual({
      endpoints: [{ name: 'export', method: 'GET', route: '/v1/export', class: 'export', anonymous: false }],
    });
    expect(await endpoints.run(stepContext({ flags: { endpoint: ['none'] }, detected: detectedOf({ endpoints: found }) }).ctx, {})).toEqual(
      { endpoints: [] },
    );
  });
});

describe('item 4, traffic', () => {
  it('numbers are validated; empty means unknown; tenant and user counts only when those identities exist', async () => {
    const t = stepContext({
      script: [
        { input: 'Typical requests per second', answer: '100' },
        { input: 'Peak requests per second', answer: '50' },
        { input: 'Peak requests per second', answer: '0' },
        { input: 'Peak requests per second', answer: '400' },
        { input: 'can safely serve', answer: '' },
        { select: 'How bursty', answer: 'high' },
        { input: 'distinct clients', answer: '1,000' },
        { input: 'tenants', answer: '20' },
      ],
    });
    expect(await traffic.run(t.ctx, { identities: ['tenant', 'api-key'] })).toEqual({
      traffic: { typicalRps: 100, peakRps: 400, burstiness: 'high', distinctClients: 1000, distinctTenants: 20 },
    });
    // a refusal says how to give no number, as the prompt does
    expect(t.prompt.rejected).toEqual([
      'The peak (50) cannot be below the typical rate (100).',
      '0 must be greater than 0, e.g. 600, or leave it empty if unknown',
    ]);
  });

  it('asks for the client count only when requests are keyed on an API key; "don\'t know" is an answer', async () => {
    const t = stepContext({
      script: [
        { input: 'Typical requests per second', answer: "don't know" },
        { input: 'Peak requests per second', answer: 'lots' },
        { input: 'Peak requests per second', answer: 'Not sure' },
        { input: 'can safely serve', answer: '?' },
        { select: 'How bursty', answer: 'low' },
        { input: 'tenants', answer: '' },
      ],
    });
    // no "distinct clients (API keys or apps)" question: the script would refuse it
    expect(await traffic.run(t.ctx, { identities: ['tenant', 'ip'] })).toEqual({ traffic: { burstiness: 'low' } });
    expect(t.prompt.rejected).toEqual(['"lots" is not a number: type digits only, e.g. 600, or leave it empty if unknown']);
  });

  it('asks the per-address numbers only when anonymous calls or IP-only identities need them, and no API-key count without API keys', async () => {
    const t = stepContext({
      script: [
        { input: 'Typical requests per second', answer: '' },
        { input: 'Peak requests per second', answer: '20000' },
        { input: 'can safely serve', answer: '' },
        { select: 'How bursty', answer: 'high' },
        { input: 'one client', answer: '1' },
        { input: 'behind one IP address', answer: '200' },
      ],
    });
    const draft = {
      identities: ['ip' as const],
      endpoints: [{ name: 'stops', method: 'GET' as const, route: '/v1/stops', class: 'read' as const, anonymous: true }],
    };
    expect(await traffic.run(t.ctx, draft)).toEqual({
      traffic: { peakRps: 20000, burstiness: 'high', clientPeakRps: 1, clientsPerAddress: 200 },
    });
    expect(t.prompt.remaining()).toEqual([]);
    expect(await traffic.run(stepContext({ interactive: false, flags: { clientRps: '0.5', clientsPerAddress: '40' } }).ctx, {})).toEqual({
      traffic: { clientPeakRps: 0.5, clientsPerAddress: 40 },
    });
  });

  it('flags and the non-interactive default', async () => {
    expect(await traffic.run(stepContext({ interactive: false, flags: { peakRps: '900', burstiness: 'low' } }).ctx, {})).toEqual({
      traffic: { peakRps: 900, burstiness: 'low' },
    });
    expect(await traffic.run(stepContext({ interactive: false }).ctx, {})).toEqual({});
  });
});

describe('item 5, plans and quotas', () => {
  it('tiers with rate and quota; calendar reset in a validated IANA zone; exhaustion', async () => {
    const t = stepContext({
      script: [
        { select: 'Have limits been promised', answer: 'yes' },
        { input: 'Name of plan 1', answer: 'free' },
        { input: 'Rate promised on free', answer: '60 per fortnight' },
        { input: 'Rate promised on free', answer: '60/minute' },
        { input: 'Quota on free', answer: '10000' },
        { confirm: 'Add another plan?', answer: true },
        { input: 'Name of plan 2', answer: 'Free' },
        { input: 'Name of plan 2', answer: 'pro' },
        { input: 'Rate promised on pro', answer: '600/minute' },
        { input: 'Quota on pro', answer: '' },
        { confirm: 'Add another plan?', answer: false },
        { select: 'When do quotas reset?', answer: 'calendar-month' },
        { input: 'Time zone', answer: 'Mars/Olympus' },
        { input: 'Time zone', answer: 'Europe/Berlin' },
        { select: 'uses up the quota', answer: 'soft-warning' },
      ],
    });
    expect(await plans.run(t.ctx, {})).toEqual({
      plans: [
        { name: 'free', rate: { requests: 60, per: 'minute' }, quota: 10000 },
        { name: 'pro', rate: { requests: 600, per: 'minute' } },
      ],
      quotas: { reset: { kind: 'calendar', period: 'month', timeZone: 'Europe/Berlin' }, exhaustion: 'soft-warning' },
    });
    expect(t.prompt.rejected).toEqual([
      '"fortnight" is not a period: use second, minute, hour or day',
      'There is already a plan called "Free".',
      '"Mars/Olympus" must be an IANA time zone such as UTC, Europe/Berlin or America/New_York',
    ]);
  });

  it('rolling windows, "no", "don\'t know"', async () => {
    const rolling = stepContext({
      script: [
        { select: 'Have limits been promised', answer: 'yes' },
        { input: 'Name of plan 1', answer: 'team' },
        { input: 'Rate promised on team', answer: '100/minute' },
        { input: 'Quota on team', answer: '50000' },
        { confirm: 'Add another plan?', answer: false },
        { select: 'When do quotas reset?', answer: 'rolling' },
        { input: 'rolling window in days', answer: '400' },
        { input: 'rolling window in days', answer: '30' },
        { select: 'uses up the quota', answer: UNKNOWN },
      ],
    });
    expect(await plans.run(rolling.ctx, {})).toEqual({
      plans: [{ name: 'team', rate: { requests: 100, per: 'minute' }, quota: 50000 }],
      quotas: { reset: { kind: 'rolling', days: 30 } },
    });
    expect(rolling.prompt.rejected).toEqual(['400 must be at most 366, e.g. 30']);
    expect(await plans.run(stepContext({ script: [{ select: 'Have limits been promised', answer: 'no' }] }).ctx, {})).toEqual({
      plans: [],
    });
    expect(await plans.run(stepContext({ script: [{ select: 'Have limits been promised', answer: UNKNOWN }] }).ctx, {})).toEqual({});
  });

  it('flags: plans, calendar reset defaulting to UTC without a zone, none', async () => {
    const t = stepContext({ interactive: false, flags: { plan: ['free:60/minute:1000'], quotaReset: 'calendar-day' } });
    expect(await plans.run(t.ctx, {})).toEqual({
      plans: [{ name: 'free', rate: { requests: 60, per: 'minute' }, quota: 1000 }],
      quotas: { reset: { kind: 'calendar', period: 'day', timeZone: 'UTC' } },
    });
    expect(await plans.run(stepContext({ flags: { plan: ['none'] } }).ctx, {})).toEqual({ plans: [] });
  });
});

describe('items 6 and 7', () => {
  const draft = {
    endpoints: [
      { name: 'login', route: '/login', class: 'auth' as const },
      { name: 's', route: '/s', class: 'search' as const },
    ],
  };

  it('failure posture: the rule of thumb by default, for the classes in use', async () => {
    const t = stepContext({ script: [{ select: "If the limiter's store", answer: DEFAULT }] });
    expect(await failure.run(t.ctx, draft)).toEqual({ failure: { byClass: { auth: 'closed', search: 'open' } } });
    const per = stepContext({
      script: [
        { select: "If the limiter's store", answer: 'choose' },
        { select: 'auth endpoints', answer: DEFAULT },
        { select: 'search endpoints', answer: 'closed' },
      ],
    });
    expect(await failure.run(per.ctx, draft)).toEqual({ failure: { byClass: { auth: 'closed', search: 'closed' } } });
    expect(per.prompt.asked[1]?.default).toBe('closed');
    expect(per.prompt.asked[2]?.default).toBe('open');
    expect(await failure.run(stepContext({ flags: { failMode: 'rule-of-thumb' } }).ctx, draft)).toEqual({
      failure: { byClass: { auth: 'closed', search: 'open' } },
    });
    expect(await failure.run(stepContext({ interactive: false }).ctx, draft)).toEqual({});
  });

  it('outbound providers', async () => {
    const t = stepContext({
      script: [
        { select: 'third-party APIs', answer: 'yes' },
        { input: 'Name of provider 1', answer: 'stripe' },
        { input: 'The limit stripe sets', answer: '100/second' },
        { confirm: 'Add another provider?', answer: false },
      ],
    });
    expect(await outbound.run(t.ctx, {})).toEqual({ outbound: [{ name: 'stripe', limit: { requests: 100, per: 'second' } }] });
    expect(await outbound.run(stepContext({ script: [{ select: 'third-party APIs', answer: 'no' }] }).ctx, {})).toEqual({ outbound: [] });
    expect(await outbound.run(stepContext({ flags: { outbound: ['none'] } }).ctx, {})).toEqual({ outbound: [] });
  });
});

describe('non-interactive runs never prompt', () => {
  it('every step resolves without a question when interactive is false', async () => {
    const t = stepContext({ interactive: false });
    let draft = {};
    for (const step of STEPS) draft = { ...draft, ...(await step.run(t.ctx, draft)) };
    expect(draft).toEqual({ output: { path: 'docs/rate-limit-design.html' } });
  });

  it('the refusing prompter turns a stray question into an internal error, not a hang', async () => {
    const t = stepContext({ interactive: false });
    await expect(t.ctx.prompt.confirm({ message: 'x?' })).rejects.toBeInstanceOf(UnexpectedPrompt);
  });
});
