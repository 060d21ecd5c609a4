/**
 * Meta-test: the registry holds the nine constraints in order, each with its module file and
 * its test file, and every message a module defines is both reported and tested.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CONSTRAINTS } from '../../src/constraints/index.js';

const SRC_DIR = fileURLToPath(new URL('../../src/constraints/', import.meta.url));
const TEST_DIR = fileURLToPath(new URL('./', import.meta.url));
/** Files in src/constraints that are not constraint modules. */
// the registry's support, and the SARIF form of its results (validate --sarif)
const SUPPORT_FILES = ['artefacts.ts', 'define.ts', 'guards.ts', 'index.ts', 'sarif.ts', 'types.ts'];

const ids = CONSTRAINTS.map((c) => c.meta.id);

describe('constraint registry', () => {
  it('holds exactly nine constraints, numbered 1 to 9 in order', () => {
    expect(CONSTRAINTS.map((c) => c.meta.number)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('has unique kebab-case ids', () => {
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[a-z]+(-[a-z]+)*$/);
  });

  it('has a module file for every constraint, and no module outside the registry', () => {
    const modules = readdirSync(SRC_DIR).filter((f) => f.endsWith('.ts') && !SUPPORT_FILES.includes(f));
    expect(modules.sort()).toEqual(ids.map((id) => `${id}.ts`).sort());
  });

  it('has a test file for every constraint', () => {
    const tests = readdirSync(TEST_DIR);
    for (const id of ids) expect(tests, id).toContain(`${id}.test.ts`);
  });

  for (const constraint of CONSTRAINTS) {
    const { id, messages, title, description } = constraint.meta;

    describe(id, () => {
      it('is the default export of its module file', async () => {
        const loaded = (await import(`../../src/constraints/${id}.ts`)) as { default: unknown };
        expect(loaded.default).toBe(constraint);
      });

      it('has a title, a description and at least one message', () => {
        expect(title.trim()).not.toBe('');
        expect(description.trim()).not.toBe('');
        expect(Object.keys(messages).length).toBeGreaterThan(0);
      });

      it('reports only messages it defines, and reports and tests each of them', () => {
        const source = readFileSync(`${SRC_DIR}${id}.ts`, 'utf8');
        const tests = readFileSync(`${TEST_DIR}${id}.test.ts`, 'utf8');
        const reported = [...source.matchAll(/messageId: '(\w+)'/g)].map((m) => m[1]);
        for (const messageId of reported) expect(Object.keys(messages), `${messageId} is defined`).toContain(messageId);
        for (const messageId of Object.keys(messages)) {
          expect(reported, `${messageId} is reported`).toContain(messageId);
          expect(tests, `${messageId} is tested`).toContain(`messageId: '${messageId}'`);
        }
      });
    });
  }
});
