import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * Three projects; `npm test` (vitest run) runs them all.
 * - unit: pure code, no servers, no browser, no child processes: what `npm run test:unit`
 *   runs on every change (in about half a minute);
 * - integration: the rest, against real redis-server, nginx, promtool, tsc, Java, the built
 *   CLI, and the two slow whole-document suites;
 * - browser: Chromium driving the HTML output, one file at a time and only after the other
 *   projects have finished (sequence.groupOrder), so a loaded machine cannot time it out.
 * A new test file is an integration test unless it is listed here as a unit one.
 */
const UNIT_FOLDERS = ['answers', 'constraints', 'design', 'questionnaire', 'render'];
const UNIT_FILES = [
  'architecture.test.ts',
  'codegen/escape.test.ts',
  'codegen/gateways.test.ts',
  'codegen/index.test.ts',
  'io/text.test.ts',
  'middleware/generate.test.ts',
  'verify/units.test.ts',
];
/** In the unit folders, but not pure (a Java process; the built CLI and a worker) or slow (whole documents). */
const NOT_UNIT = [
  'render/vnu.test.ts',
  'render/diagram-job.test.ts',
  'render/html.test.ts',
  'render/markdownlint.test.ts',
  // a real nginx -t, and the built CLI reading /dev/urandom
  'questionnaire/existing-limiters.test.ts',
  'answers/input-limits.test.ts',
];

const testFiles = readdirSync(fileURLToPath(new URL('./test', import.meta.url)), { recursive: true, encoding: 'utf8' })
  .map((f) => f.split('\\').join('/'))
  .filter((f) => f.endsWith('.test.ts') && !f.startsWith('fixtures/'))
  .sort();
const isBrowser = (f: string): boolean => f.startsWith('browser/');
const isUnit = (f: string): boolean => !NOT_UNIT.includes(f) && (UNIT_FILES.includes(f) || UNIT_FOLDERS.some((d) => f.startsWith(`${d}/`)));
const under = (files: string[]): string[] => files.map((f) => `test/${f}`);

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    projects: [
      // isolate: false: the files share one module graph per worker, which saves most of the
      // tier's time (importing the sources once, not once per file); these suites keep no state
      { extends: true, test: { name: 'unit', include: [...under(testFiles.filter(isUnit)), 'src/**/*.test.ts'], isolate: false } },
      { extends: true, test: { name: 'integration', include: under(testFiles.filter((f) => !isUnit(f) && !isBrowser(f))) } },
      {
        extends: true,
        test: { name: 'browser', include: under(testFiles.filter(isBrowser)), fileParallelism: false, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
