/**
 * Hono behind AWS API Gateway with a Valkey store (test/fixtures/review/hono-valkey-aws-sessions):
 * what the document says of the AWS WAF rules, the stage throttle and the store is what the
 * shipped files do and what the user runs.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AWS_PATH } from '../../src/codegen/gateway/cloud.js';
import { shippedEdgeScope } from '../../src/codegen/gateway/shipped.js';
import { generateCode } from '../../src/codegen/index.js';
import { renderMarkdown } from '../../src/render/markdown/index.js';
import { wafCountedNames } from '../../src/codegen/gateway/shipped.js';
import { inputFromAnswers } from './fixtures.js';

const raw = JSON.parse(readFileSync(new URL('../fixtures/review/hono-valkey-aws-sessions.answers.json', import.meta.url), 'utf8'));
delete raw.$schema;
const input = inputFromAnswers(raw);
const md = renderMarkdown(input, { layout: 'single' })[0]?.content ?? '';
/** The document's text as a reader sees it: Markdown's backslash escapes undone. */
const text = md.replace(/\\([{}[\]$\\])/g, '$1');
const files = generateCode(input.design);
const awsFile = files.find((f) => f.path === AWS_PATH)!;
const aws = JSON.parse(awsFile.content);

describe('AWS WAF path patterns: the paths WAF sees', () => {
  const counted = (method: string, path: string): string[] =>
    wafCountedNames(aws, method, path).map((n) => n.replace(/^rl-(.*)-\d+$/, '$1'));

  // the default endpoint puts the stage in front (https://{id}.execute-api.{region}.amazonaws.com/prod/api/feed);
  // a custom domain sends the path as the client wrote it, a base path mapping's base path first
  const cases: [string, string, string[]][] = [
    ['GET', '/api/feed', ['anonymous-per-ip']],
    ['GET', '/prod/api/feed', ['anonymous-per-ip']],
    ['GET', '/Prod/API/Feed/', ['anonymous-per-ip']],
    ['HEAD', '/prod/api/feed', ['anonymous-per-ip']],
    ['GET', '/v1/api/feed', ['anonymous-per-ip']],
    ['GET', '/prod/api/search', ['anonymous-per-ip-cost-5']],
    ['GET', '/api/search', ['anonymous-per-ip-cost-5']],
    ['POST', '/prod/api/feed', []],
    ['GET', '/prod/api/feed/extra', []],
    ['GET', '/prod/v1/api/feed', []],
    ['GET', '/prod/healthz', []],
  ];
  for (const [method, path, want] of cases)
    it(`${method} ${path}: ${want.length > 0 ? want.join(', ') : 'no rule'}`, () => {
      expect(counted(method, path)).toEqual(want);
    });

  it('the document and the file say which paths WAF sees, with the pattern the file ships', () => {
    const shipped = aws.wafRateBasedRules[0].Statement.RateBasedStatement.ScopeDownStatement.AndStatement.Statements[1].RegexMatchStatement
      .RegexString as string;
    expect(shipped).toBe('^(?:/[^/]+)?/api/feed/?$');
    const said = `each WAF path pattern allows one optional leading segment before the route (${shipped})`;
    expect(aws._comment.join(' ')).toContain(said);
    expect(text).toContain(said);
    expect(text).toContain(
      'on the default endpoint (https://{api-id}.execute-api.{region}.amazonaws.com/{stage}/api/feed) it starts with the stage name',
    );
  });

  it('the shipped-file check refuses patterns that miss the stage in front of the path', () => {
    expect(shippedEdgeScope(input.design, files)).toEqual([]);
    const anchored = { ...awsFile, content: awsFile.content.split('^(?:/[^/]+)?/').join('^/') };
    const found = shippedEdgeScope(input.design, [...files.filter((f) => f !== awsFile), anchored]);
    expect(found.map((f) => f.stated).join('\n')).toContain('on the default endpoint, where WAF sees it under the stage (/prod/api/feed)');
  });
});

describe('AWS WAF worst case: how long WAF can take to act', () => {
  it('says what AWS says: requests can pass above the limit for up to several minutes, so the figure is no bound', () => {
    const row = md.split('\n').find((l) => l.startsWith('| `anonymous-per-ip` | edge |'))!;
    expect(row).toContain('for up to several minutes before WAF detects the rate and blocks them');
    expect(row).toContain('not a bound');
    expect(row).not.toContain('every 10 s');
    expect(row).not.toContain('never more than the limit');
    for (const rule of aws.wafRateBasedRules) expect(rule._note).toContain('for up to several minutes before WAF starts blocking');
  });
});

describe('one ceiling row, one bucket per API method: no method is refused below the ceiling', () => {
  const ceiling = input.design.rules.find((r) => r.id === 'global-ceiling')!;
  const rps = ceiling.rate!.requests / ceiling.rate!.periodSeconds;
  /** The stage's method settings that apply to a method, the most specific first (a method's own replaces the stage's). */
  const applying = (method: string, route: string) =>
    (aws.stageMethodSettings as { ResourcePath: string; HttpMethod: string; ThrottlingRateLimit: number; ThrottlingBurstLimit: number }[])
      .filter(
        (m) =>
          (m.ResourcePath === '/*' || m.ResourcePath === route.replace(/\//g, '~1').replace(/^~1/, '/')) &&
          ['*', method].includes(m.HttpMethod),
      )
      .sort(
        (a, b) =>
          Number(b.ResourcePath !== '/*') - Number(a.ResourcePath !== '/*') || Number(b.HttpMethod !== '*') - Number(a.HttpMethod !== '*'),
      );

  it("the hot endpoint (feed) gets the ceiling's full rate and burst from the shipped file, above the answers' peak", () => {
    expect(rps).toBe(2100);
    expect(raw.traffic.peakRps).toBe(1400);
    const [feed] = applying('GET', '/api/feed');
    expect(feed).toMatchObject({ ResourcePath: '/*', HttpMethod: '*', _rule: 'global-ceiling' });
    // the file says it too: a reader of the file alone must not take the stage setting for a total
    expect((feed as unknown as { _note: string })._note).toContain('to each method on its own, with no total across methods');
    expect(feed!.ThrottlingRateLimit).toBe(rps);
    expect(feed!.ThrottlingBurstLimit).toBe(ceiling.burst);
    expect(feed!.ThrottlingRateLimit).toBeGreaterThanOrEqual(raw.traffic.peakRps);
    // every limited method alike: none is throttled below the row
    for (const e of input.design.scope.endpoints.filter((x) => x.class !== 'health'))
      expect(applying(e.method, e.route)[0]?.ThrottlingRateLimit, e.name).toBe(rps);
  });

  it('the document states the per-method count, the total it lets through and how to cap the total', () => {
    const details = text.slice(
      text.indexOf('#### Rule `global-ceiling`'),
      text.indexOf('#### Rule', text.indexOf('#### Rule `global-ceiling`') + 1),
    );
    expect(details).toContain("API Gateway counts global-ceiling's rate per API method and has no throttle on a stage's total");
    expect(details).toContain('each of the 8 methods it throttles gets 2,100 req/s of its own');
    expect(details).toContain('can pass up to 8 x 2,100 req/s = 16,800 req/s in total');
    expect(details).toContain('keep the ceiling in the middleware (a rules entry {"id": "global-ceiling", "layer": "middleware"}');
    expect(details).toContain("or lower the methods' rates by hand in stageMethodSettings of gateway/aws-api-gateway.json");
    const worst = md.split('\n').find((l) => l.startsWith('| `global-ceiling` | edge |'))!;
    expect(worst).toContain('| min((2,100 + 2,100/s x 1 s) x 8 API methods, 5,000 + 10,000/s x 1 s) |');
    expect(worst).toContain('so a flood spread over them passes up to 8 x it, 8 x 4,200 = 33,600 in 1 s');
    const edge = md.split('\n').find((l) => l.startsWith('| edge | AWS API Gateway stage throttling'))!;
    expect(edge).toContain('up to 8 x 2,100 req/s = 16,800 req/s in total');
    expect(edge).toContain('The rule details of global-ceiling say how to cap the total.');
  });

  it('the rules entry the document gives for a true total cap moves the ceiling into the middleware: one count in the store', () => {
    const entry = JSON.parse(/a rules entry (\{"id": "global-ceiling", "layer": "middleware"\})/.exec(text)![1]!);
    const moved = inputFromAnswers({ ...raw, rules: [...raw.rules, entry] });
    const rule = moved.design.rules.find((r) => r.id === 'global-ceiling')!;
    expect(rule).toMatchObject({ layer: 'middleware', key: 'rl:{global}:ceiling', rate: ceiling.rate, burst: ceiling.burst });
    const shipped = generateCode(moved.design);
    const design = shipped.find((f) => f.path === 'middleware/design.ts')!.content;
    const block = design.slice(design.indexOf('id: "global-ceiling"'), design.indexOf('\n    },', design.indexOf('id: "global-ceiling"')));
    expect(block).toContain('key: "{global}:ceiling"');
    expect(block).toContain('store: "redis"'); // the shared store (Valkey speaks its protocol)
    const movedAws = JSON.parse(shipped.find((f) => f.path === AWS_PATH)!.content);
    expect((movedAws.stageMethodSettings ?? []).filter((m: { _rule: string }) => m._rule === 'global-ceiling')).toEqual([]);
    const movedMd = renderMarkdown(moved, { layout: 'single' })[0]?.content ?? '';
    expect(movedMd).not.toContain("counts global-ceiling's rate per API method");
  });
});

describe('the store the answers name: Valkey', () => {
  const section = (title: string): string => {
    const at = md.indexOf(`### ${title}`);
    return md.slice(at, md.indexOf('\n##', at + 4));
  };

  it('names Valkey where the text is about the server the user runs, Redis where it is about the scripts both run', () => {
    expect(input.design.scope.store).toBe('valkey');
    const memory = section('2.4 Memory estimate');
    expect(memory).toContain('everything Valkey keeps for a key included');
    expect(memory).toContain('measured on Redis 7.0\n(Valkey, forked from Redis 7.2');
    const hybrid = section('4.4 Local and distributed hybrid');
    expect(hybrid).toContain('in front of the shared Valkey bucket');
    expect(hybrid).toContain('that Valkey has not yet counted');
    expect(hybrid).not.toMatch(/\bRedis\b/);
    const config = section('6.3 Store configuration');
    expect(config).toContain('# valkey.conf of the limiter');
    expect(config).toContain('plus 64 MiB for Valkey itself');
    expect(config).toContain('With noeviction Valkey then refuses');
    expect(config).not.toContain('redis.conf');
    const worst = md.split('\n').find((l) => l.startsWith('| `webhooks-per-source` | middleware (local + store) |'))!;
    expect(worst).toContain('before Valkey has counted; a local charge Valkey refuses');
    // the scripts are Redis Lua in both servers
    expect(md).toContain('one Redis Lua script per decision (EVALSHA), check and consume in a single atomic step on Valkey');
  });
});
