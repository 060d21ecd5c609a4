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
import { wafCountedNames } from '../codegen/support/gateway-reading.js';
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
