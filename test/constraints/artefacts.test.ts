/**
 * The constraints read what ships: for every example and a design per framework, gateway and
 * header convention, the generated files pass every check. (Each check broken in one file, the
 * constraint failing and naming it: in the constraint's own test file.)
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AnswersInput } from '../../src/answers/schema.js';
import { generateCode, type CodeFile } from '../../src/codegen/index.js';
import { alertMetrics, metricsOf, shippedDesign, shippedProviders } from '../../src/constraints/artefacts.js';
import { checkDesign, formatFinding } from '../../src/constraints/index.js';
import type { Design } from '../../src/design/model.js';
import { exampleDesign, exampleNames, ROOT } from '../helpers/examples.js';
import { designFrom } from '../middleware/harness.js';
import { MAIN, PLANS } from '../middleware/designs.js';

/** The failing constraints and their messages. */
function failures(design: Design, files: readonly CodeFile[]): { id: string; messages: string[] }[] {
  return checkDesign(design, files)
    .filter((r) => !r.passed)
    .map((r) => ({ id: r.id, messages: r.findings.map(formatFinding) }));
}

const variants: Record<string, Design> = {
  ...Object.fromEntries(exampleNames().map((n) => [n, exampleDesign(n)])),
  'plans (fastify, x-ratelimit)': designFrom(PLANS),
  ...Object.fromEntries(
    (['koa', 'hono', 'nestjs', 'other'] as const).map((framework) => [
      framework,
      designFrom({ ...MAIN, stack: { ...MAIN.stack, framework } }),
    ]),
  ),
  ...Object.fromEntries(
    (['nginx', 'envoy', 'kong', 'aws-api-gateway', 'cloudflare'] as const).map((gateway) => [
      `gateway ${gateway}`,
      // the design's own numbers (MAIN's hand-written rules give a window algorithm a burst)
      designFrom({ ...MAIN, rules: [], stack: { ...MAIN.stack, gateway }, identities: ['api-key', 'ip'] }),
    ]),
  ),
  'ietf-trio': designFrom({ ...MAIN, headers: { ...MAIN.headers, convention: 'ietf-trio' } }),
};

describe('the generated files pass every check', () => {
  it.each(Object.keys(variants))('%s', (name) => {
    const design = variants[name] as Design;
    expect(failures(design, generateCode(design))).toEqual([]);
  });
});

describe('a design whose every rule runs at the edge', () => {
  const answers = JSON.parse(readFileSync(path.join(ROOT, 'test/design/fixtures/anonymous-cgnat.answers.json'), 'utf8')) as AnswersInput;
  const design = designFrom(answers);
  const files = generateCode(design);

  it('ships no middleware, promises no application headers, alerts only on what the edge exports, and passes', () => {
    expect(design.rules.every((r) => r.layer === 'edge')).toBe(true);
    expect(files.filter((f) => f.path.startsWith('middleware/'))).toEqual([]);
    expect(files.find((f) => f.path === 'gateway/nginx-server.conf')?.content).toContain('no rule of this design runs in the application');
    expect(design.monitoring.metrics.some((m) => (m.emittedBy ?? []).includes('middleware'))).toBe(false);
    expect(failures(design, files)).toEqual([]);
  });
});

describe('reading the files', () => {
  it('reads design.ts and providers.ts back to the data they were written from', () => {
    const design = exampleDesign('saas-platform');
    const files = generateCode(design);
    const data = shippedDesign(files);
    expect(data?.rules.map((r) => r.id)).toEqual(
      design.rules
        .filter((r) => r.layer === 'middleware')
        .map((r) => r.id)
        .sort((a, b) => (data?.rules.findIndex((r) => r.id === a) ?? 0) - (data?.rules.findIndex((r) => r.id === b) ?? 0)),
    );
    expect(data?.scripts.map((s) => s.name)).toEqual(['gcra', 'sliding-window-log', 'identity-limits', 'penalty']);
    expect(shippedProviders(files).map((p) => [p.name, p.shared])).toEqual([
      ['Stripe', true],
      ['SendGrid', true],
    ]);
  });

  it('finds the metrics of a PromQL expression, not its functions, labels or durations', () => {
    expect(metricsOf('histogram_quantile(0.99, sum by (le) (rate(ratelimit_store_latency_ms_bucket[5m]))) > 5')).toEqual([
      'ratelimit_store_latency_ms_bucket',
    ]);
    expect(
      metricsOf('sum by (rule) (increase(a_total{x="y",rule=~"b|c"}[5m])) > 0 or sum(b_total unless b_total offset 5m) > 0').sort(),
    ).toEqual(['a_total', 'b_total']);
    expect(alertMetrics(generateCode(exampleDesign('saas-platform'))).length).toBeGreaterThan(5);
  });
});
