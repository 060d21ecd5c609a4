/**
 * validate's SARIF log: valid against the official SARIF 2.1.0 schema (test/fixtures/sarif), one
 * descriptor per constraint, and every finding located at the field (or generated file) that
 * causes it, by line and column.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { Answers, type AnswersInput } from '../../src/answers/schema.js';
import type { CodeFile } from '../../src/codegen/index.js';
import { generateCode } from '../../src/codegen/index.js';
import { CONSTRAINTS, checkDesign } from '../../src/constraints/index.js';
import { CODE_BASE_ID, toSarif } from '../../src/constraints/sarif.js';
import type { ConstraintResult } from '../../src/constraints/types.js';
import { buildDesign } from '../../src/design/build.js';
import type { Design } from '../../src/design/model.js';
import { DATE, EXAMPLES, ROOT, reviewDesign } from '../helpers/examples.js';
import { MAIN } from '../middleware/designs.js';
import { edit, saas } from './broken-files.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const schema = JSON.parse(readFileSync(path.join(ROOT, 'test/fixtures/sarif/sarif-schema-2.1.0.json'), 'utf8'));
// unicodeRegExp off: the schema's language-tag pattern has a stray "]" (fixed in the errata), which
// only a non-unicode regular expression accepts
const ajv = new Ajv({ allErrors: true, strict: false, unicodeRegExp: false });
addFormats(ajv);
const validateSarif = ajv.compile(schema);

type Log = ReturnType<typeof toSarif>;
type Result = Log['runs'][number]['results'][number];

function expectValid(log: unknown): void {
  const ok = validateSarif(log);
  expect(ok, JSON.stringify(validateSarif.errors, null, 2)).toBe(true);
  // the errata of 2.1.0 also require every region to have a start line (rl-design always gives one)
  for (const r of (log as Log).runs[0]!.results)
    for (const l of [...r.locations, ...(r.relatedLocations ?? [])]) {
      if (l.physicalLocation.region) expect(l.physicalLocation.region.startLine).toBeGreaterThan(0);
    }
}

function sarifOf(design: Design, text: string, files: readonly CodeFile[] = generateCode(design), results?: ConstraintResult[]): Log {
  return toSarif(design, results ?? checkDesign(design, files), files, { answers: { uri: 'answers.json', text } });
}

/** Answers written as a user would (two-space JSON), their design, and the SARIF log. */
function broken(input: AnswersInput): { text: string; log: Log } {
  const text = `${JSON.stringify(input, null, 2)}\n`;
  const design = buildDesign(Answers.parse(input), { date: DATE });
  return { text, log: sarifOf(design, text) };
}

/** The text a result's answers region starts with. */
function textAt(text: string, r: Result | NonNullable<Result['relatedLocations']>[number]): string {
  const region = ('locations' in r ? r.locations[0]! : r).physicalLocation.region!;
  const line = text.split('\n')[region.startLine - 1] ?? '';
  return line.slice(region.startColumn - 1);
}

/** The 1-based line and column where `needle` first occurs in `text` after `after`. */
function lineCol(text: string, needle: string, after = ''): { startLine: number; startColumn: number } {
  const from = after ? text.indexOf(after) : 0;
  expect(from, `${after} is in the text`).toBeGreaterThanOrEqual(0);
  const at = text.indexOf(needle, from);
  expect(at, `${needle} is in the text`).toBeGreaterThanOrEqual(0);
  const before = text.slice(0, at).split('\n');
  return { startLine: before.length, startColumn: before.at(-1)!.length + 1 };
}

function findingsOf(log: Log, ruleId: string): Result[] {
  return log.runs[0]!.results.filter((r) => r.ruleId === ruleId);
}

describe('validate --sarif', () => {
  it('is a valid SARIF 2.1.0 log with one descriptor per constraint and no results for a passing example', () => {
    const text = readFileSync(path.join(EXAMPLES, 'saas-platform.answers.json'), 'utf8');
    const log = sarifOf(saas().design, text, saas().files);
    expectValid(log);
    const { driver } = log.runs[0]!.tool;
    expect(driver.rules.map((r) => r.id)).toEqual(CONSTRAINTS.map((c) => c.meta.id));
    for (const [i, r] of driver.rules.entries()) {
      expect(r.name).toMatch(/^[A-Z][A-Za-z]+$/);
      expect(r.shortDescription.text).toBe(`${i + 1}. ${CONSTRAINTS[i]!.meta.title}`);
      expect(r.fullDescription.text).toBe(CONSTRAINTS[i]!.meta.description);
      expect(r.defaultConfiguration.level).toBe('error');
    }
    expect(log.runs[0]!.results).toEqual([]);
    // the validator is real: a result without a message is not SARIF
    const bad = structuredClone(log) as unknown as { runs: { results: unknown[] }[] };
    bad.runs[0]!.results.push({ ruleId: 'complete-rules', level: 'error' });
    expect(validateSarif(bad)).toBe(false);
  });

  it('carries a pass note as a tool notification tied to the constraint, never as a result (code scanning alerts on every result)', () => {
    const design = reviewDesign('nestjs-memory-quotas');
    const text = readFileSync(path.join(ROOT, 'test/fixtures/review/nestjs-memory-quotas.answers.json'), 'utf8');
    const checks = checkDesign(design, generateCode(design));
    const noted = checks.filter((c) => c.note !== undefined);
    expect(noted.map((c) => c.id)).toContain('shared-outbound');
    const log = sarifOf(design, text, generateCode(design), checks);
    expectValid(log);
    const invocation = log.runs[0]!.invocations[0] as {
      toolExecutionNotifications?: { level: string; message: { text: string }; associatedRule: { id: string; index: number } }[];
    };
    const notes = invocation.toolExecutionNotifications ?? [];
    expect(notes.map((n) => n.associatedRule.id)).toEqual(noted.map((c) => c.id));
    expect(notes.find((n) => n.associatedRule.id === 'shared-outbound')).toEqual({
      level: 'note',
      message: { text: 'Passes: one instance: its process holds the only bucket for Stripe.' },
      associatedRule: { id: 'shared-outbound', index: CONSTRAINTS.findIndex((c) => c.meta.id === 'shared-outbound') },
    });
    // a passing design has no result at all: nothing for code scanning to open an alert for
    expect(log.runs[0]!.results).toEqual([]);
  });

  it('locates a hand-written rule without a TTL at the rules entry of the answers', () => {
    const input: AnswersInput = {
      ...MAIN,
      rules: [
        ...(MAIN.rules ?? []),
        {
          id: 'search-burst',
          endpointClass: 'read',
          identity: 'user',
          algorithm: 'gcra',
          primitive: 'redis-lua',
          key: 'rl:{u:<id>}:s',
          rate: { requests: 5, per: 'second' },
          burst: 10,
          cost: 1,
          failMode: 'open',
          layer: 'middleware',
          cardinalityBound: 1000,
        },
      ],
    };
    const { text, log } = broken(input);
    expectValid(log);
    const [r] = findingsOf(log, 'bounded-keys').filter((x) => x.properties.messageId === 'missingTtl');
    expect(r, JSON.stringify(log.runs[0]!.results)).toBeDefined();
    expect(r!.level).toBe('error');
    expect(r!.properties.matrixRuleId).toBe('search-burst');
    expect(r!.locations[0]!.physicalLocation.artifactLocation.uri).toBe('answers.json');
    expect(r!.locations[0]!.physicalLocation.region).toMatchObject(lineCol(text, '"id": "search-burst"'));
    expect(textAt(text, r!)).toBe('"id": "search-burst",');
  });

  it('locates a stated field of the rules entry when the finding is about it (the fail mode)', () => {
    const input: AnswersInput = {
      ...MAIN,
      rules: [{ id: 'anonymous-per-ip', rate: { requests: 1, per: 'second' }, burst: 2, primitive: 'get-then-set' }],
    };
    const { text, log } = broken(input);
    expectValid(log);
    const [r] = findingsOf(log, 'atomic-check').filter((x) => x.properties.messageId === 'notAtomic');
    expect(r).toBeDefined();
    expect(r!.locations[0]!.physicalLocation.region).toMatchObject(lineCol(text, '"primitive": "get-then-set"'));
    expect(textAt(text, r!)).toBe('"primitive": "get-then-set"');
  });

  it('locates a missing auth dimension at the auth endpoint', () => {
    const input: AnswersInput = { ...MAIN, rules: [...(MAIN.rules ?? []), { id: 'auth-login-per-ip', remove: true }] };
    const { text, log } = broken(input);
    expectValid(log);
    const [r] = findingsOf(log, 'auth-dual-key');
    expect(r).toBeDefined();
    // the entry of the endpoints array that names login: from its opening brace
    const open = text.lastIndexOf('{', text.indexOf('"name": "login"'));
    const before = text.slice(0, open).split('\n');
    expect(r!.locations[0]!.physicalLocation.region).toMatchObject({ startLine: before.length, startColumn: before.at(-1)!.length + 1 });
    expect(textAt(text, r!)).toBe('{');
  });

  it('locates a per-instance outbound bucket at the provider’s bucket field', () => {
    const input: AnswersInput = {
      ...MAIN,
      stack: { ...MAIN.stack, topology: 'horizontal', instances: 4 },
      outbound: [{ name: 'Stripe', limit: { requests: 100, per: 'second' }, bucket: 'per-instance' }],
    };
    const { text, log } = broken(input);
    expectValid(log);
    const [r] = findingsOf(log, 'shared-outbound');
    expect(r, JSON.stringify(log.runs[0]!.results)).toBeDefined();
    expect(r!.locations[0]!.physicalLocation.region).toMatchObject(lineCol(text, '"bucket": "per-instance"'));
  });

  it('locates billing from the limiter at quotas.billingSource', () => {
    const answers = JSON.parse(readFileSync(path.join(EXAMPLES, 'saas-platform.answers.json'), 'utf8'));
    answers.quotas.billingSource = 'limiter-counters';
    const { text, log } = broken(answers);
    expectValid(log);
    const [r] = findingsOf(log, 'quota-billing-separation');
    expect(r).toBeDefined();
    expect(r!.locations[0]!.physicalLocation.region).toMatchObject(lineCol(text, '"billingSource": "limiter-counters"'));
  });

  it('names the generated file as the artifact for a finding about what ships, with the answers behind the rule beside it', () => {
    const g = saas();
    const files = edit(g, 'middleware/design.ts', (c) => c.replace('id: "fairness-pro"', 'id: "fairness-pro-renamed"'));
    const text = readFileSync(path.join(EXAMPLES, 'saas-platform.answers.json'), 'utf8');
    const log = sarifOf(g.design, text, files);
    expectValid(log);
    const [r] = findingsOf(log, 'complete-rules');
    expect(r).toBeDefined();
    const loc = r!.locations[0]!.physicalLocation;
    expect(loc.artifactLocation).toEqual({ uri: 'middleware/design.ts', uriBaseId: CODE_BASE_ID });
    const content = files.find((f) => f.path === 'middleware/design.ts')!.content;
    expect(loc.region).toMatchObject(lineCol(content, 'fairness-pro'));
    expect(log.runs[0]!.originalUriBaseIds).toBeDefined();
    // the rule comes from the Pro plan
    const related = r!.relatedLocations![0]!;
    expect(related.physicalLocation.artifactLocation.uri).toBe('answers.json');
    expect(textAt(text, related)).toMatch(/^\{ "name": "Pro"/);
  });

  it('names a generated file under the code folder when the answers give one', () => {
    const g = saas();
    const files = edit(g, 'middleware/design.ts', (c) => c.replace('defaultMode: "shadow"', 'defaultMode: "enforce"'));
    const log = toSarif(g.design, checkDesign(g.design, files), files, {
      answers: { uri: 'answers.json', text: '{}' },
      codeDirUri: 'ratelimit/',
    });
    expectValid(log);
    const [r] = findingsOf(log, 'shadow-rollout');
    expect(r!.locations[0]!.physicalLocation.artifactLocation).toEqual({ uri: 'ratelimit/middleware/design.ts' });
    expect(log.runs[0]!.originalUriBaseIds).toBeUndefined();
  });

  it('points at the top of the answers with a logical location when no field answers for the finding', () => {
    const g = saas();
    const results: ConstraintResult[] = checkDesign(g.design, g.files).map((c) =>
      c.id === 'fail-mode'
        ? {
            ...c,
            passed: false,
            findings: [{ constraintId: 'fail-mode', messageId: 'missingAlert', data: { signal: 'store_errors' } }],
            messages: [''],
          }
        : c,
    );
    const log = sarifOf(g.design, '{"project": {}}\n', g.files, results);
    expectValid(log);
    const [r] = findingsOf(log, 'fail-mode');
    expect(r!.locations[0]!.physicalLocation.region).toMatchObject({ startLine: 1, startColumn: 1 });
    expect(r!.locations[0]!.logicalLocations).toEqual([{ name: 'fail-mode', fullyQualifiedName: 'constraints/fail-mode', kind: 'object' }]);
    expect(r!.ruleIndex).toBe(4);
  });
});
