/**
 * The section templates read only what their view models provide: every field a template names
 * (at the top, inside `#each` over a list of the view, or one level up with `../`) is a key of
 * that view in at least one of the documents built here (every example and every fixture design),
 * so a renamed or misspelt field fails here instead of printing nothing. Helpers and the
 * renderer's own `num` are not fields.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AnswersInput } from '../../src/answers/schema.js';
import { HELPER_NAMES } from '../../src/render/helpers.js';
import { SECTIONS } from '../../src/render/sections/index.js';
import type { RenderInput } from '../../src/render/types.js';
import { exampleNames, ROOT } from '../helpers/examples.js';
import { exampleInput, inputFromAnswers } from './fixtures.js';

const FIXTURES = path.join(ROOT, 'test', 'design', 'fixtures');
const inputs: RenderInput[] = [
  ...exampleNames().map(exampleInput),
  ...readdirSync(FIXTURES)
    .filter((f) => f.endsWith('.answers.json'))
    .map((f) => inputFromAnswers(JSON.parse(readFileSync(path.join(FIXTURES, f), 'utf8')) as AnswersInput)),
];

// and one document after `verify --write`: its scenarios carry their results
const verified = exampleInput('minimal-generic');
inputs.push({
  ...verified,
  design: {
    ...verified.design,
    scenarios: verified.design.scenarios.map((s) => ({
      ...s,
      result: {
        passed: true,
        detail: 'measured',
        redisVersion: '7.0.15',
        date: '2026-12-03',
        runs: s.ruleIds.map((ruleId) => ({ ruleId, passed: true, expected: 'e', measured: 'm' })),
        latency: { calls: 1, p50Ms: 0.1, p99Ms: 0.2 },
      },
    })),
  },
});

const HELPERS: ReadonlySet<string> = new Set(HELPER_NAMES);
const NOT_FIELDS = new Set(['this', 'else', 'true', 'false', 'null', 'undefined', 'num']);

/** A scope: the objects a name is looked up in (null: a list the documents never fill, not checkable). */
type Scope = object[] | null;

function keysOf(scope: object[]): Set<string> {
  const keys = new Set<string>();
  for (const o of scope) for (const k of Object.keys(o)) keys.add(k);
  return keys;
}

/** The values of a field across the scope's objects. */
function valuesOf(scope: object[], field: string): unknown[] {
  return scope.map((o) => (o as Record<string, unknown>)[field]).filter((v) => v !== undefined);
}

/** Every field a template reads that no view in its scope has, as `field (line N)`. */
function unknownFields(source: string, views: object[]): string[] {
  const missing: string[] = [];
  const stack: { block: string; scope: Scope }[] = [{ block: 'root', scope: views }];
  const check = (word: string, line: number): void => {
    if (/^["'\d@]/.test(word) || NOT_FIELDS.has(word)) return;
    let depth = stack.length - 1;
    let name = word;
    while (name.startsWith('../')) {
      name = name.slice(3);
      depth -= 1;
      // `../` climbs one each/with scope, not an if
      while (depth > 0 && stack[depth]?.block === 'if') depth -= 1;
    }
    while (depth > 0 && stack[depth]?.block === 'if') depth -= 1;
    const scope = stack[Math.max(0, depth)]?.scope;
    if (scope === null || scope === undefined) return;
    const root = name.split('.')[0] as string;
    if (!keysOf(scope).has(root)) missing.push(`${word} (line ${line})`);
  };
  for (const m of source.matchAll(/\{\{~?([#/^]?)\s*([^}]*?)~?\}\}/g)) {
    const line = source.slice(0, m.index).split('\n').length;
    const [sigil, body] = [m[1] as string, (m[2] as string).trim()];
    const words = body.split(/\s+/).filter(Boolean);
    if (sigil === '/') {
      stack.pop();
      continue;
    }
    if (sigil === '#') {
      const [helper, arg] = words as [string, string | undefined];
      if (arg !== undefined) check(arg, line);
      if (helper === 'each' || helper === 'with') {
        const current = stack[stack.length - 1]?.scope;
        const values = current && arg ? valuesOf(current, arg.replace(/^(\.\.\/)+/, '')) : [];
        const items = helper === 'each' ? values.flatMap((v) => (Array.isArray(v) ? v : [])) : values;
        const objects = items.filter((v): v is object => typeof v === 'object' && v !== null);
        stack.push({ block: helper, scope: objects.length > 0 ? objects : null });
      } else stack.push({ block: 'if', scope: stack[stack.length - 1]?.scope ?? null });
      continue;
    }
    if (words[0] === 'else' || words.length === 0) continue;
    const args = HELPERS.has(words[0] as string) ? words.slice(1) : words;
    for (const a of args) check(a, line);
  }
  return missing;
}

describe('every field a section template reads is in its view model', () => {
  it('builds the views of every example and fixture', () => {
    expect(inputs.length).toBeGreaterThanOrEqual(9);
  });

  it.each(SECTIONS.map((s) => [s.id, s] as const))('%s', (_id, section) => {
    const views = inputs.filter((i) => section.present(i.design)).map((i) => section.view(i) as object);
    expect(views.length).toBeGreaterThan(0);
    const source = readFileSync(path.join(ROOT, 'templates', 'markdown', 'sections', `${section.template}.md.hbs`), 'utf8');
    expect(unknownFields(source, views)).toEqual([]);
  });

  it('would catch a misspelt field', () => {
    expect(
      unknownFields('{{mdText projectNmae}} {{#each rows}}{{mdCell idd}}{{/each}}', [{ projectName: 'x', rows: [{ id: 'a' }] }]),
    ).toEqual(['projectNmae (line 1)', 'idd (line 1)']);
  });
});
