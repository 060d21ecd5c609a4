/** Loads the example answers files and builds their designs (shared by tests). */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Answers } from '../../src/answers/schema.js';
import { buildDesign } from '../../src/design/build.js';
import type { Design } from '../../src/design/model.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const EXAMPLES = path.join(ROOT, 'examples');
export const DATE = '2026-12-02';

export { exampleNames } from '../../src/paths.js';

export function exampleAnswers(name: string): Answers {
  return Answers.parse(JSON.parse(readFileSync(path.join(EXAMPLES, `${name}.answers.json`), 'utf8')));
}

export function exampleDesign(name: string): Design {
  return buildDesign(exampleAnswers(name), { date: DATE });
}

/** The answers of a reviewer's fixture, test/fixtures/review/<name>.answers.json. */
export function reviewAnswers(name: string): Answers {
  return Answers.parse(JSON.parse(readFileSync(path.join(ROOT, 'test', 'fixtures', 'review', `${name}.answers.json`), 'utf8')));
}

export function reviewDesign(name: string): Design {
  return buildDesign(reviewAnswers(name), { date: DATE });
}
