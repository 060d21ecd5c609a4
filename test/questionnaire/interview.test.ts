import { describe, expect, it } from 'vitest';
import { Answers, SCHEMA_URL } from '../../src/answers/schema.js';
import { buildDesign } from '../../src/design/build.js';
import { detectProject } from '../../src/questionnaire/detect/index.js';
import { parseInitFlags } from '../../src/questionnaire/flags.js';
import { answersText, detectedFrom, detectionReport, finishAnswers, runInterview } from '../../src/questionnaire/interview.js';
import { refusingPrompter } from '../../src/questionnaire/prompt.js';
import { failModes, matrixAtAGlance, shortRate } from '../../src/commands/init-summary.js';
import { exampleAnswers } from '../helpers/examples.js';
import { fixture } from './detect/fixtures.js';
import { DEFAULT, scripted } from './support/scripted.js';
import { UNKNOWN } from '../../src/questionnaire/context.js';

describe('the interview', () => {
  it('reports what was found, and from which file, before asking', async () => {
    const detection = await detectProject(fixture('express-ioredis'));
    const lines = detectionReport(detection, true);
    expect(lines[0]).toBe('Looked at this folder first. Found:');
    expect(lines).toContain('  framework: express (package.json: express ^5.1.0 in dependencies, 5.1.0 in package-lock.json)');
    expect(lines.some((l) => l.includes('existing limiter: express-rate-limit') && l.includes('src/app.js'))).toBe(true);
    const empty = detectionReport(await detectProject(fixture('empty')), true);
    expect(empty[0]).toContain('no package.json, OpenAPI file, nginx, Envoy or Kong configuration found');
  });

  it('uses detected facts as defaults: a fully scripted run on the Fastify + OpenAPI project', async () => {
    const detection = await detectProject(fixture('fastify-openapi'));
    const prompt = scripted([
      { select: 'Format of the design document?', answer: 'markdown' },
      { input: 'Write the document to', answer: DEFAULT },
      { input: 'Folder for the generated code', answer: '' },
      { checkbox: 'protect against', answer: ['abuse', 'fairness'] },
      { confirm: 'Keep what was found for the stack: framework fastify, language TypeScript (package.json)?', answer: DEFAULT },
      { select: 'How does the API run', answer: 'single' },
      { select: 'API gateway', answer: 'none' },
      { select: 'Is Redis', answer: 'redis' },
      { confirm: 'Keep the identities found: user (openapi.yaml)?', answer: DEFAULT },
      { confirm: 'Use these 14 endpoints?', answer: DEFAULT },
      { input: 'Typical requests per second', answer: '' },
      { input: 'Peak requests per second', answer: '300' },
      { input: 'can safely serve', answer: '' },
      { select: 'How bursty', answer: UNKNOWN },
      // identities: user (from openapi.yaml), no API key: no client count asked
      { input: 'user accounts', answer: '' },
      { select: 'Have limits been promised', answer: 'no' },
      { select: "If the limiter's store", answer: DEFAULT },
      { select: 'third-party APIs', answer: 'no' },
    ]);
    const said: string[] = [];
    const draft = await runInterview({
      prompt,
      interactive: true,
      flags: parseInitFlags({}),
      detected: detectedFrom(detection),
      say: (l) => said.push(l),
    });
    expect(prompt.remaining()).toEqual([]);
    const answers = finishAnswers(draft, 'orders-service');
    expect(Object.keys(answers)[0]).toBe('$schema');
    expect(answers.$schema).toBe(SCHEMA_URL);
    expect(answers.output).toEqual({ format: 'markdown', path: 'docs/rate-limit-design.md' });
    expect(answers.stack).toEqual({ framework: 'fastify', language: 'TypeScript', topology: 'single', gateway: 'none', store: 'redis' });
    expect(answers.endpoints).toHaveLength(14);
    expect(answers.traffic).toEqual({ peakRps: 300 });
    expect(answers.plans).toEqual([]);
    expect(answers.failure?.byClass).toMatchObject({ auth: 'closed', read: 'open', search: 'open' });
    expect(answers.failure?.byClass?.health).toBeUndefined();
    expect(answers.outbound).toEqual([]);
    expect(Answers.parse(JSON.parse(answersText(answers)))).toEqual(answers);
  });

  it('with the ask-twice rule exhausted on items 1 and 2 the design is the generic one', async () => {
    const prompt = scripted([
      { select: 'Format', answer: DEFAULT },
      { input: 'Write the document to', answer: DEFAULT },
      { input: 'Folder for the generated code', answer: '' },
      { checkbox: 'protect against', answer: [UNKNOWN] },
      { checkbox: 'Asking once more', answer: [UNKNOWN] },
      { select: 'Which web framework', answer: UNKNOWN },
      { select: 'Asking once more', answer: UNKNOWN },
      { checkbox: 'keyed on', answer: [UNKNOWN] },
      { select: 'Which endpoints', answer: UNKNOWN },
      { input: 'Typical', answer: '' },
      { input: 'Peak', answer: '' },
      { input: 'safely serve', answer: '' },
      { select: 'bursty', answer: UNKNOWN },
      { input: 'distinct clients', answer: '' },
      { select: 'Have limits been promised', answer: UNKNOWN },
      { select: "If the limiter's store", answer: UNKNOWN },
      { select: 'third-party', answer: UNKNOWN },
    ]);
    const draft = await runInterview({
      prompt,
      interactive: true,
      flags: parseInitFlags({}),
      detected: { answers: {}, byField: {} },
      say: () => {},
    });
    const answers = finishAnswers(draft);
    expect(answers).toEqual({
      $schema: SCHEMA_URL,
      output: { format: 'html', path: 'docs/rate-limit-design.html' },
      unknown: ['goals', 'stack'],
    });
    const design = buildDesign(answers, { date: '2026-01-01' });
    expect(design.meta.generic).toBe(true);
    expect(design.assumptions.some((a) => a.id === 'generic')).toBe(true);
  });

  it('non-interactive: flags + detected facts, and not a single question', async () => {
    const detection = await detectProject(fixture('nginx-only'));
    const draft = await runInterview({
      prompt: refusingPrompter(),
      interactive: false,
      flags: parseInitFlags({ format: 'markdown', goals: 'overload', peakRps: '500' }),
      detected: detectedFrom(detection),
      say: () => {},
    });
    expect(finishAnswers(draft)).toEqual({
      $schema: SCHEMA_URL,
      output: { format: 'markdown', path: 'docs/rate-limit-design.md' },
      goals: ['overload'],
      stack: { gateway: 'nginx', trustedProxies: ['10.0.0.0/8'] },
      traffic: { peakRps: 500 },
      existing: {
        limiters: [
          {
            kind: 'nginx',
            name: 'api',
            source: 'nginx.conf:25',
            path: '/api/',
            match: 'prefix',
            location: true,
            keyedOn: 'ip',
            limit: 10,
            windowSeconds: 1,
            burst: 20,
            algorithm: 'leaky-bucket',
          },
        ],
        nginx: [
          { name: 'limit_req_status', value: '429', context: 'http', source: 'nginx.conf:10' },
          { name: 'set_real_ip_from', value: '10.0.0.0/8', context: 'http', source: 'nginx.conf:12' },
          { name: 'real_ip_header', value: 'X-Forwarded-For', context: 'http', source: 'nginx.conf:13' },
          { name: 'real_ip_recursive', value: 'on', context: 'http', source: 'nginx.conf:14' },
        ],
      },
    });
  });
});

describe('the summary', () => {
  it('shows the matrix at a glance: rule id, layer, rate, fail mode', () => {
    const design = buildDesign(
      Answers.parse({
        goals: ['abuse'],
        stack: { framework: 'express', store: 'redis' },
        endpoints: [{ name: 'login', method: 'POST', route: '/login', class: 'auth' }],
      }),
      { date: '2026-01-01' },
    );
    const lines = matrixAtAGlance(design);
    expect(lines[0]).toMatch(/^RULE\s+LAYER\s+RATE\s+FAIL MODE$/);
    expect(lines.some((l) => /auth-login-per-ip\s+middleware\s+100\/15 min\s+closed/.test(l))).toBe(true);
    expect(failModes(design)).toBe('auth fail closed');
    expect(shortRate({ requests: 10, periodSeconds: 900 })).toBe('10/15 min');
    expect(shortRate({ requests: 1000, periodSeconds: 1 })).toBe('1,000/s');
  });
});

describe('files in the summary', () => {
  it('one phrase per file: the document, or the index and each section of a folder', async () => {
    const { documentFiles } = await import('../../src/commands/init-summary.js');
    expect(documentFiles(['docs/d.md'], 'Markdown')).toEqual([{ path: 'docs/d.md', phrase: 'the design document (Markdown)' }]);
    expect(documentFiles(['docs/d/README.md', 'docs/d/01-scope-and-limit-matrix.md'], 'Markdown')).toEqual([
      {
        path: 'docs/d/README.md',
        phrase: 'the design document, start here: contents and the limit matrix at a glance (Markdown, linked folder)',
      },
      { path: 'docs/d/01-scope-and-limit-matrix.md', phrase: 'section: scope and limit matrix' },
    ]);
  });

  it("the code folder, and the OpenAPI Overlay when one was written, named by the adapter's framework", async () => {
    const { codeFiles, SUMMARY_OVERLAY_PATH } = await import('../../src/commands/init-summary.js');
    const { OVERLAY_PATH } = await import('../../src/codegen/openapi/index.js');
    expect(SUMMARY_OVERLAY_PATH).toBe(OVERLAY_PATH);
    const design = buildDesign(exampleAnswers('saas-platform'), { date: '2026-12-02' });
    const without = codeFiles('src/limits', ['src/limits/README.md', 'src/limits/lua/gcra.lua'], design);
    expect(without).toHaveLength(1);
    expect(without[0]?.phrase).toMatch(/^enforcement code: 2 files \(Lua scripts, Express middleware/);
    const koa = buildDesign(
      { ...exampleAnswers('saas-platform'), stack: { ...exampleAnswers('saas-platform').stack, framework: 'koa' } },
      { date: '2026-12-02' },
    );
    const withOverlay = codeFiles('src/limits', ['src/limits/README.md', `src/limits/${OVERLAY_PATH}`], koa);
    expect(withOverlay[0]?.phrase).toContain('Koa middleware');
    expect(withOverlay[1]).toEqual({
      path: `src/limits/${OVERLAY_PATH}`,
      phrase: expect.stringMatching(/^the OpenAPI Overlay of the API's own document: .*429/),
    });
  });
});
