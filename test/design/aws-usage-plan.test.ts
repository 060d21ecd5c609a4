/**
 * AWS API Gateway: an API key joins one usage plan per stage, so every API-key edge rule sits in
 * one plan. A rule over every endpoint is the plan's own Throttle, a rule naming endpoints a
 * method throttle on each of its methods; where two rules would need one throttle (the plan's, or
 * one method's) the stricter ships and the document states the other as not enforced there.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Answers } from '../../src/answers/schema.js';
import { generateCode } from '../../src/codegen/index.js';
import { checkDesign } from '../../src/constraints/index.js';
import { buildDesign } from '../../src/design/build.js';
import { awsKeyPlan } from '../../src/design/gateway-behaviour.js';
import { renderMarkdown } from '../../src/render/markdown/index.js';

const base = JSON.parse(readFileSync(new URL('../fixtures/gateway/aws-api-keys.answers.json', import.meta.url), 'utf8'));

function build(rules: unknown[]) {
  const design = buildDesign(Answers.parse({ ...base, rules }), { date: '2026-12-03' });
  const files = generateCode(design);
  const checks = checkDesign(design, files);
  const doc = renderMarkdown({ design, checks, codeFiles: files }, { layout: 'single' })[0]?.content ?? '';
  const aws = JSON.parse(files.find((f) => f.path === 'gateway/aws-api-gateway.json')!.content);
  const row = (id: string) =>
    doc
      .split('\n')
      .find((l) => l.startsWith(`| [\`${id}\`]`))!
      .split(' | ')
      .map((c) => c.replace(/^\| |\s*\|$/g, '').trim());
  return { design, files, checks, doc, aws, row, failed: checks.filter((c) => !c.passed).map((c) => c.id) };
}

describe('one API-key rule over every endpoint, of mixed costs', () => {
  const { aws, doc, failed } = build([
    { id: 'all-per-key', identity: 'api-key', layer: 'edge', rate: { requests: 30, per: 'second' }, burst: 60 },
  ]);

  it('split by the cost-3 export, both parts name their endpoints and ship as method throttles, not as a plan-wide Throttle', () => {
    // the cost-3 export splits the rule: both parts name their endpoints, so both are method throttles
    const [plan] = aws.usagePlans;
    expect(plan.Throttle).toBeUndefined();
    expect(Object.keys(plan.ApiStages[0].Throttle)).toContain('/v1/exports/POST');
    expect(plan.ApiStages[0].Throttle['/v1/exports/POST']).toEqual({ RateLimit: 10, BurstLimit: 20 });
    expect(plan.ApiStages[0].Throttle['/v1/subscriptions/POST']).toEqual({ RateLimit: 30, BurstLimit: 60 });
    expect(doc).not.toContain('one token bucket per API key (the Throttle of the design');
    expect(failed).toEqual([]);
  });
});

describe('an API-key rule over every endpoint of one cost', () => {
  const flat = { ...base, endpoints: base.endpoints.map((e: any) => ({ ...e, cost: e.class === 'health' ? undefined : 1 })) };
  const design = buildDesign(
    Answers.parse({
      ...flat,
      rules: [{ id: 'all-per-key', identity: 'api-key', layer: 'edge', rate: { requests: 30, per: 'second' }, burst: 60 }],
    }),
    {
      date: '2026-12-03',
    },
  );
  const files = generateCode(design);
  const aws = JSON.parse(files.find((f) => f.path === 'gateway/aws-api-gateway.json')!.content);

  it("ships as the plan's Throttle, which every method of the stage counts against, and no method throttle", () => {
    expect(awsKeyPlan(design.rules).planLevel).toBe('all-per-key');
    const [plan] = aws.usagePlans;
    expect(plan.Throttle).toEqual({ RateLimit: 30, BurstLimit: 60 });
    expect(plan.ApiStages[0].Throttle).toBeUndefined();
    expect(design.rules.find((r) => r.id === 'all-per-key')!.rationale).toContain(
      "ships it as the Throttle of the design's one usage plan",
    );
    expect(checkDesign(design, files).filter((c) => !c.passed)).toEqual([]);
  });
});

describe('two API-key rules on one method, two over every endpoint', () => {
  const { aws, row, doc, design, failed } = build([
    { id: 'all-per-key', identity: 'api-key', layer: 'edge', rate: { requests: 50, per: 'second' }, burst: 100 },
    { id: 'all-per-key-tight', identity: 'api-key', layer: 'edge', rate: { requests: 30, per: 'second' }, burst: 60 },
    {
      id: 'reads-per-key',
      identity: 'api-key',
      layer: 'edge',
      endpoints: ['station', 'predictions'],
      rate: { requests: 20, per: 'second' },
      burst: 40,
    },
    { id: 'station-per-key', identity: 'api-key', layer: 'edge', endpoints: ['station'], rate: { requests: 8, per: 'second' }, burst: 16 },
  ]);

  it('ships the stricter on each method, and each rule says where it is not counted', () => {
    const t = aws.usagePlans[0].ApiStages[0].Throttle;
    expect(t['/v1/stations/{id}/GET']).toEqual({ RateLimit: 8, BurstLimit: 16 });
    expect(t['/v1/stations/{id}/predictions/GET']).toEqual({ RateLimit: 20, BurstLimit: 40 });
    expect(row('station-per-key')[5]).toBe('edge');
    expect(row('reads-per-key')[5]).toBe('edge, not on GET /v1/stations/:id');
    expect(row('all-per-key')[5]).toBe("edge: not enforced (the usage plan carries another rule's throttle in its place)");
    const reads = design.rules.find((r) => r.id === 'reads-per-key')!;
    expect(reads.rationale).toContain(
      'Not enforced on GET /v1/stations/:id: a usage plan holds one throttle per method, and there it carries station-per-key (the stricter)',
    );
    // a rule counted nowhere has no worst-case row
    expect(doc.split('\n').some((l) => l.startsWith('| `all-per-key` | edge |'))).toBe(false);
    expect(doc).toContain(
      "all-per-key, all-per-key-cost-3 are not enforced: the usage plan carries another rule's throttle in their place",
    );
    expect(aws.usagePlans[0]._rules['reads-per-key']).toContain(
      'not counted on GET /v1/stations/:id (station-per-key holds the throttle there)',
    );
    expect(aws.usagePlans[0]._rules['all-per-key']).toBeUndefined();
    expect(failed).toEqual([]);
  });
});
