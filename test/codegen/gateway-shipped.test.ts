/**
 * The gateway files the CLI writes, read back from disk: what they do is what the document says.
 * An API-key API on AWS ships its two API-key edge rules (one split by cost) as method throttles
 * of one usage plan, on exactly the methods each names; every edge rule of an Envoy, Cloudflare
 * and AWS file states the fail mode the matrix gives it. A file edited to say otherwise fails the
 * checks `validate` runs.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Answers } from '../../src/answers/schema.js';
import { shippedEdgeFailModes } from '../../src/codegen/gateway/shipped.js';
import type { CodeFile } from '../../src/codegen/types.js';
import { checkDesign } from '../../src/constraints/index.js';
import { buildDesign } from '../../src/design/build.js';
import { ROOT } from '../helpers/examples.js';
import { runCli, generatedFiles, tempDir } from '../helpers/cli.js';

const DATE = '2026-12-03';
const AWS = 'gateway/aws-api-gateway.json';

const generated = (answersFile: string) => generatedFiles(answersFile, DATE);

function designOf(answers: unknown) {
  return buildDesign(Answers.parse(answers), { date: DATE });
}

/** The files with one replaced by an edited copy. */
function withFile(files: readonly CodeFile[], file: string, change: (content: string) => string): CodeFile[] {
  const f = files.find((x) => x.path === file);
  expect(f, file).toBeDefined();
  const content = change(f!.content);
  expect(content).not.toBe(f!.content);
  return files.map((x) => (x.path === file ? { ...x, content } : x));
}

function withJson(files: readonly CodeFile[], file: string, change: (doc: any) => void): CodeFile[] {
  return withFile(files, file, (c) => {
    const doc = JSON.parse(c);
    change(doc);
    return `${JSON.stringify(doc, null, 2)}\n`;
  });
}

/** The findings of the checks validate runs, as "constraint/message rule". */
function failures(design: ReturnType<typeof designOf>, files: readonly CodeFile[]): string[] {
  return checkDesign(design, files)
    .filter((c) => !c.passed)
    .flatMap((c) => c.findings.map((f) => `${c.id}/${f.messageId} ${f.ruleId ?? ''}`.trim()));
}

/** The matrix row of a rule, as its cells. */
function matrixRow(doc: string, id: string): string[] {
  const line = doc.split('\n').find((l) => l.startsWith(`| [\`${id}\`]`));
  expect(line, `matrix row ${id}`).toBeDefined();
  return line!.split(' | ').map((c) => c.replace(/^\| |\s*\|$/g, '').trim());
}

/** Drops the annotations the file tells the reader to remove (keys starting with "_"). */
function bare(value: any): any {
  if (Array.isArray(value)) return value.map(bare);
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k]) => !k.startsWith('_'))
        .map(([k, v]) => [k, bare(v)]),
    );
  return value;
}

/**
 * The properties CloudFormation's resource schemas allow (AWS::ApiGateway::UsagePlan with its
 * ApiStage and ThrottleSettings, AWS::ApiGateway::Stage MethodSetting), as cfn-lint ships them.
 */
function cfnProblems(doc: any): string[] {
  const out: string[] = [];
  const only = (what: string, obj: any, allowed: string[]): void => {
    for (const k of Object.keys(obj ?? {})) if (!allowed.includes(k)) out.push(`${what}: ${k} is not a property`);
  };
  const throttle = (what: string, t: any): void => {
    only(what, t, ['BurstLimit', 'RateLimit']);
    if (t.BurstLimit !== undefined && !(Number.isInteger(t.BurstLimit) && t.BurstLimit >= 0))
      out.push(`${what}: BurstLimit is not an integer >= 0`);
    if (t.RateLimit !== undefined && !(typeof t.RateLimit === 'number' && t.RateLimit >= 0))
      out.push(`${what}: RateLimit is not a number >= 0`);
  };
  for (const u of doc.usagePlans ?? []) {
    only('UsagePlan', u, ['ApiStages', 'Description', 'Quota', 'Tags', 'Throttle', 'UsagePlanName']);
    if (u.Throttle) throttle('UsagePlan.Throttle', u.Throttle);
    for (const s of u.ApiStages ?? []) {
      only('ApiStage', s, ['ApiId', 'Stage', 'Throttle']);
      for (const [k, t] of Object.entries(s.Throttle ?? {})) {
        // a method throttle's key is the resource path and the method: /pets/GET
        if (!/^(\/[^/]+)*\/(GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS|ANY)$/.test(k)) out.push(`ApiStage.Throttle: key ${k}`);
        throttle(`ApiStage.Throttle ${k}`, t);
      }
    }
  }
  for (const m of doc.stageMethodSettings ?? []) {
    only('MethodSetting', m, [
      'CacheDataEncrypted',
      'CacheTtlInSeconds',
      'CachingEnabled',
      'DataTraceEnabled',
      'HttpMethod',
      'LoggingLevel',
      'MetricsEnabled',
      'ResourcePath',
      'ThrottlingBurstLimit',
      'ThrottlingRateLimit',
    ]);
    // slashes after the first are encoded as ~1; /* with * for every method
    if (!(m.ResourcePath === '/*' || m.ResourcePath === '/' || /^\/[^/]+$/.test(m.ResourcePath)))
      out.push(`MethodSetting: ResourcePath ${m.ResourcePath}`);
  }
  return out;
}

describe('AWS: two API-key edge rules on different routes, one with a cost-3 endpoint', () => {
  const answersFile = path.join(ROOT, 'test/fixtures/gateway/aws-api-keys.answers.json');
  const { doc, files, answers } = generated(answersFile);
  const design = designOf(answers);
  const aws = JSON.parse(files.find((f) => f.path === AWS)!.content);

  it('ships one usage plan whose method throttles are exactly the methods each rule names, and no plan-wide Throttle', () => {
    expect(aws.usagePlans).toHaveLength(1);
    const [plan] = aws.usagePlans;
    // no rule covers every endpoint: nothing may throttle the whole stage per key
    expect(plan.Throttle).toBeUndefined();
    expect(plan.ApiStages).toHaveLength(1);
    expect(plan.ApiStages[0].Throttle).toEqual({
      '/v1/stations/{id}/GET': { RateLimit: 20, BurstLimit: 40 },
      '/v1/stations/{id}/HEAD': { RateLimit: 20, BurstLimit: 40 },
      '/v1/stations/{id}/predictions/GET': { RateLimit: 20, BurstLimit: 40 },
      '/v1/stations/{id}/predictions/HEAD': { RateLimit: 20, BurstLimit: 40 },
      '/v1/subscriptions/POST': { RateLimit: 6, BurstLimit: 12 },
      // the cost-3 export: bulk-per-key's 6/s, burst 12 divided by 3
      '/v1/exports/POST': { RateLimit: 2, BurstLimit: 4 },
    });
    // the numbers are the matrix's
    expect(matrixRow(doc, 'reads-per-key')[3]).toBe('20 / 1 s, burst 40');
    expect(matrixRow(doc, 'bulk-per-key')[3]).toBe('6 / 1 s, burst 12');
    expect(matrixRow(doc, 'bulk-per-key-cost-3')[3]).toBe('2 / 1 s, burst 4 (requests of cost 3)');
  });

  it("is what CloudFormation's schemas accept once the _ annotations are removed", () => {
    expect(cfnProblems(bare(aws))).toEqual([]);
  });

  it('the document says where each rule ships and that each method has its own bucket per key', () => {
    expect(doc).toContain(
      "gateway/aws-api-gateway.json ships it as method throttles of the design's one usage plan (an API key joins one usage plan per stage) on /v1/stations/\\{id\\}/GET, /v1/stations/\\{id\\}/HEAD, /v1/stations/\\{id\\}/predictions/GET, /v1/stations/\\{id\\}/predictions/HEAD: each a token bucket per API key and method",
    );
    expect(doc).toContain(
      "ships it as a method throttle of the design's one usage plan (an API key joins one usage plan per stage) on /v1/exports/POST",
    );
    const worst = doc.split('\n').find((l) => l.startsWith('| `reads-per-key` | edge |'))!;
    expect(worst).toContain('(40 + 20/s x 1 s) x 4 API methods');
    expect(doc).not.toContain('one token bucket per API key, under');
  });

  it("states each rule's fail mode where the file configures it, as the matrix does", () => {
    for (const id of ['global-ceiling', 'reads-per-key', 'bulk-per-key', 'bulk-per-key-cost-3']) {
      const stated = shippedEdgeFailModes(design, files).filter((s) => s.ruleId === id);
      expect(stated.length, id).toBeGreaterThan(0);
      for (const s of stated) expect(`fail ${s.failMode}`, id).toBe(matrixRow(doc, id)[4]);
    }
    expect(aws.usagePlans[0]._rules['bulk-per-key']).toContain('fail closed if its count moves to a shared store');
  });

  it('passes validate as written, and fails once the file throttles other methods or states another fail mode', () => {
    expect(runCli(['validate', '-a', answersFile]).code).toBe(0);
    expect(failures(design, files)).toEqual([]);
    // the defect this guards against: the plan throttling every route of the stage
    expect(
      failures(
        design,
        withJson(files, AWS, (d) => {
          d.usagePlans[0].Throttle = { RateLimit: 20, BurstLimit: 40 };
        }),
      ),
    ).toEqual(['complete-rules/edgeScopeDiffers']);
    expect(
      failures(
        design,
        withJson(files, AWS, (d) => {
          delete d.usagePlans[0].ApiStages[0].Throttle['/v1/exports/POST'];
        }),
      ),
    ).toEqual(['complete-rules/edgeScopeDiffers bulk-per-key-cost-3']);
    expect(
      failures(
        design,
        withJson(files, AWS, (d) => {
          d.usagePlans[0].ApiStages[0].Throttle['/v1/exports/POST'].RateLimit = 6;
        }),
      ),
    ).toEqual(['complete-rules/edgeNumbersDiffer bulk-per-key-cost-3']);
    expect(
      failures(
        design,
        withJson(files, AWS, (d) => {
          d.usagePlans[0]._rules['bulk-per-key'] = d.usagePlans[0]._rules['bulk-per-key'].replace('fail closed', 'fail open');
        }),
      ),
    ).toEqual(['fail-mode/failModeNotShipped bulk-per-key']);
  });
});

describe('every edge rule of an Envoy, Cloudflare and AWS file states the fail mode the matrix gives it', () => {
  const base = JSON.parse(readFileSync(path.join(ROOT, 'test/fixtures/edge-cost/keyless-envoy.answers.json'), 'utf8'));
  const cases = [
    { gateway: 'envoy', file: 'gateway/envoy-local-ratelimit.yaml' },
    { gateway: 'cloudflare', file: 'gateway/cloudflare-ratelimit.json' },
    { gateway: 'aws-api-gateway', file: AWS },
  ] as const;
  for (const { gateway, file } of cases) {
    describe(gateway, () => {
      const dir = tempDir();
      const answersFile = path.join(dir, 'answers.json');
      const { $schema: _, ...rest } = base;
      writeFileSync(answersFile, JSON.stringify({ ...rest, stack: { ...base.stack, gateway } }));
      const { doc, files, answers } = generated(answersFile);
      const design = designOf(answers);
      const edge = design.rules.filter((r) => r.layer === 'edge');

      it('states, for each edge rule, the mode of its matrix row', () => {
        expect(edge.map((r) => r.id)).toEqual(['global-ceiling', 'anonymous-per-ip', 'anonymous-per-ip-cost-5']);
        const stated = shippedEdgeFailModes(design, files);
        for (const r of edge) {
          const mine = stated.filter((s) => s.ruleId === r.id);
          expect(mine.length, r.id).toBeGreaterThan(0);
          for (const s of mine) expect(`fail ${s.failMode}`, `${r.id} ${s.where}`).toBe(matrixRow(doc, r.id)[4]);
        }
        expect(failures(design, files)).toEqual([]);
      });

      it('fails validate once the file states another mode for a rule, or none', () => {
        const flipped = withFile(files, file, (c) => c.replace(/fail open if its count moves/, 'fail closed if its count moves'));
        expect(failures(design, flipped)).toEqual(['fail-mode/failModeNotShipped global-ceiling']);
        const silent = withFile(files, file, (c) => c.replace(/fail open if its count moves/, 'counts'));
        expect(failures(design, silent)).toEqual(['fail-mode/edgeFailModeNotStated global-ceiling']);
      });

      if (gateway === 'envoy') {
        it("the rules the rate limit service counts fail as the filter's failure_mode_deny says", () => {
          const yaml = files.find((f) => f.path === file)!.content;
          expect(yaml).toContain('failure_mode_deny: false');
          expect(yaml).toContain(
            '# anonymous-per-ip: fail open: while the rate limit service is unreachable, Envoy lets its requests through uncounted (failure_mode_deny false).',
          );
          const deny = withFile(files, file, (c) => c.replace('failure_mode_deny: false', 'failure_mode_deny: true'));
          // ... and its 503 has no local reply mapper giving it Retry-After (only a fail-closed file has one)
          expect(failures(design, deny)).toEqual([
            'response-contract/unavailableReplyNotShipped',
            'fail-mode/failModeNotShipped anonymous-per-ip',
            'fail-mode/failModeNotShipped anonymous-per-ip-cost-5',
          ]);
        });
      }
    });
  }
});

describe('the Cloudflare rules: validate reads back the numbers and the routes of both expression forms', () => {
  const CF = 'gateway/cloudflare-ratelimit.json';
  const base = JSON.parse(readFileSync(path.join(ROOT, 'test/fixtures/edge-cost/keyless-envoy.answers.json'), 'utf8'));
  const dir = tempDir();
  const answersFile = path.join(dir, 'answers.json');
  const { $schema: _, ...rest } = base;
  writeFileSync(answersFile, JSON.stringify({ ...rest, stack: { ...base.stack, gateway: 'cloudflare' } }));
  const { files, answers } = generated(answersFile);
  const design = designOf(answers);
  const cf = JSON.parse(files.find((f) => f.path === CF)!.content);
  const rule = (id: string) => cf.rules.findIndex((r: any) => r.description.startsWith(`${id}: `));
  /** The failures once one rule's expression is rewritten. */
  const edited = (id: string, change: (e: string) => string) =>
    failures(
      design,
      withJson(files, CF, (d) => {
        d.rules[rule(id)].expression = change(d.rules[rule(id)].expression);
      }),
    );

  it('ships static routes as eq / in and routes with parameters as matches, and says which plan each rule needs', () => {
    const ip = cf.rules[rule('anonymous-per-ip')].expression;
    expect(ip).toContain('lower(http.request.uri.path) in {"/v1/tables" "/v1/tables/"}');
    expect(ip).toContain('http.request.uri.path matches "(?i)^/v1/tables/[^/]+/?$"');
    expect(cf.rules[rule('global-ceiling')].expression).not.toContain('matches');
    expect(cf._comment).toContain(
      'anonymous-per-ip: Business plan or above, for a regular expression (matches) for its routes with parameters (Business), the request method in its expression (Business).',
    );
    expect(runCli(['validate', '-a', answersFile]).code).toBe(0);
    expect(failures(design, files)).toEqual([]);
  });

  it('fails validate once a number drifts', () => {
    expect(
      failures(
        design,
        withJson(files, CF, (d) => {
          d.rules[rule('anonymous-per-ip')].ratelimit.requests_per_period += 1;
        }),
      ),
    ).toEqual(['complete-rules/edgeNumbersDiffer anonymous-per-ip']);
  });

  it('fails validate once a static path (eq / in) drifts, and not for spacing or order', () => {
    expect(edited('anonymous-per-ip', (e) => e.replace('{"/v1/tables" "/v1/tables/"}', '{"/v1/table" "/v1/table/"}'))).toEqual([
      'complete-rules/edgeScopeDiffers anonymous-per-ip',
    ]);
    // the ceiling's exempt health route, inside not (...)
    expect(edited('global-ceiling', (e) => e.replace('"/ready" "/ready/"', '"/readyz" "/readyz/"'))).toEqual([
      'complete-rules/edgeScopeDiffers global-ceiling',
    ]);
    expect(edited('global-ceiling', (e) => e.replace(/^not /, ''))).toEqual(['complete-rules/edgeScopeDiffers global-ceiling']);
    expect(edited('anonymous-per-ip', (e) => e.replace('{"/v1/tables" "/v1/tables/"}', '{ "/v1/tables/"   "/v1/tables" }'))).toEqual([]);
  });

  it('fails validate once a regex (matches) or a method drifts', () => {
    expect(edited('anonymous-per-ip-cost-5', (e) => e.replace('/export/?$', '/exports/?$'))).toEqual([
      'complete-rules/edgeScopeDiffers anonymous-per-ip-cost-5',
    ]);
    expect(edited('anonymous-per-ip-cost-5', (e) => e.replace('{"POST"}', '{"GET"}'))).toEqual([
      'complete-rules/edgeScopeDiffers anonymous-per-ip-cost-5',
    ]);
    // a rule turned into matching every request limits every endpoint
    expect(edited('anonymous-per-ip', () => 'true')).toEqual(['complete-rules/edgeScopeDiffers anonymous-per-ip']);
  });
});
