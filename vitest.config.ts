import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Three projects; `npm test` (vitest run) runs them all.
 * - unit: pure code, no servers, no browser, no child processes: what `npm run test:unit`
 *   runs on every change (in well under a minute);
 * - integration: the rest, against real redis-server, nginx, promtool, tsc, Java, the built
 *   CLI, and the two slow whole-document suites;
 * - browser: Chromium driving the HTML output, one file at a time and only after the other
 *   projects have finished (sequence.groupOrder), so a loaded machine cannot time it out.
 */
const UNIT = [
  'test/architecture.test.ts',
  'test/answers/**/*.test.ts',
  'test/constraints/**/*.test.ts',
  'test/design/**/*.test.ts',
  'test/questionnaire/**/*.test.ts',
  // not vnu (a Java process) nor diagram-job (the built CLI and a worker thread); nor the
  // whole-document suites html and markdownlint (pure, but together they would double it)
  'test/render/!(vnu|diagram-job|html|markdownlint).test.ts',
  'test/codegen/escape.test.ts',
  'test/codegen/gateways.test.ts',
  'test/codegen/index.test.ts',
  'test/middleware/generate.test.ts',
  'test/verify/units.test.ts',
  'src/**/*.test.ts',
];
const BROWSER = ['test/browser/**/*.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    projects: [
      // isolate: false: the files share one module graph per worker, which saves most of the
      // tier's time (importing the sources once, not once per file); these suites keep no state
      { extends: true, test: { name: 'unit', include: UNIT, isolate: false } },
      { extends: true, test: { name: 'integration', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, ...UNIT, ...BROWSER] } },
      { extends: true, test: { name: 'browser', include: BROWSER, fileParallelism: false, sequence: { groupOrder: 1 } } },
    ],
  },
});
