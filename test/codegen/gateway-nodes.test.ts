/**
 * A ceiling counted in each gateway node (Envoy's local filter, nginx limit_req) is a promise
 * about the whole fleet: with stack.gatewayNodes = K each node ships the ceiling / K, and without
 * it every node ships the full ceiling while key counts and memory are sized for what the K
 * nodes the document assumes admit. The CLI writes the files into a temp folder; the tests read
 * them back, and the checks validate runs fail once a shipped per-node number differs.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { Answers } from '../../src/answers/schema.js';
import type { CodeFile } from '../../src/codegen/types.js';
import { checkDesign } from '../../src/constraints/index.js';
import { buildDesign } from '../../src/design/build.js';
import { ROOT } from '../helpers/examples.js';
import { generatedFiles, tempDir } from '../helpers/cli.js';

const DATE = '2026-12-03';
const ENVOY = 'gateway/envoy-local-ratelimit.yaml';
const NGINX = 'gateway/nginx.conf';

const generated = (answersFile: string) => generatedFiles(answersFile, DATE);

/** An answers file with `change` applied, written to a temp folder. */
function answersWith(fixture: string, change: (a: any) => void): string {
  const { $schema: _, ...a } = JSON.parse(readFileSync(path.join(ROOT, fixture), 'utf8'));
  change(a);
  const file = path.join(tempDir(), 'answers.json');
  writeFileSync(file, JSON.stringify(a));
  return file;
}

function designOf(answers: unknown) {
  return buildDesign(Answers.parse(answers), { date: DATE });
}

function withFile(files: readonly CodeFile[], file: string, change: (content: string) => string): CodeFile[] {
  const f = files.find((x) => x.path === file);
  expect(f, file).toBeDefined();
  const content = change(f!.content);
  expect(content).not.toBe(f!.content);
  return files.map((x) => (x.path === file ? { ...x, content } : x));
}

/** The findings of the checks validate runs, as "constraint/message rule". */
function failures(design: ReturnType<typeof designOf>, files: readonly CodeFile[]): string[] {
  return checkDesign(design, files)
    .filter((c) => !c.passed)
    .flatMap((c) => c.findings.map((f) => `${c.id}/${f.messageId} ${f.ruleId ?? ''}`.trim()));
}

/** The memory estimate's row of a rule, as its cells. */
function memoryRow(doc: string, id: string): string[] {
  const line = doc.split('\n').find((l) => l.startsWith(`| \`${id}\` | `) && /\| [\d.,]+ (MiB|GiB|KiB|B) \|$/.test(l));
  expect(line, `memory row ${id}`).toBeDefined();
  return line!.split(' | ').map((c) => c.replace(/^\| |\s*\|$/g, '').trim());
}

/** The local rate limit filter's own token bucket in the shipped Envoy file. */
function envoyBucket(files: readonly CodeFile[]): { max_tokens: number; tokens_per_fill: number; fill_interval: string } {
  const doc = parseYaml(files.find((f) => f.path === ENVOY)!.content);
  const local = doc.http_connection_manager.http_filters.find((f: any) => f.name === 'envoy.filters.http.local_ratelimit');
  return local.typed_config.token_bucket;
}

describe('Go behind 3 Envoy nodes (stack.gatewayNodes 3): each node ships a third of the ceiling', () => {
  const { doc, files, answers } = generated(path.join(ROOT, 'test/fixtures/review/go-envoy-anonymous.answers.json'));
  const design = designOf(answers);
  const ceiling = design.rules.find((r) => r.id === 'global-ceiling')!;

  it('ships 1,000 req/s, burst 1,000 per node for the 3,000 req/s ceiling, and states both figures', () => {
    expect(ceiling.rate).toEqual({ requests: 3000, periodSeconds: 1 });
    expect(ceiling.perNode).toEqual({ nodes: 3, rate: { requests: 1000, periodSeconds: 1 }, burst: 1000 });
    const bucket = envoyBucket(files);
    expect(bucket.max_tokens).toBe(1000);
    // the fill rate: tokens_per_fill every fill_interval = 1,000 per second
    expect(bucket.tokens_per_fill / Number(bucket.fill_interval.replace(/s$/, ''))).toBe(1000);
    const yaml = files.find((f) => f.path === ENVOY)!.content;
    expect(yaml).toContain('divided by the 3 Envoy nodes (stack.gatewayNodes), rounded down: 1,000 per 1 s, burst 1,000 here');
    expect(yaml).toContain('with uneven load balancing');
    // the matrix and the placement say both
    expect(doc).toContain('3,000 req/s for the fleet is 1,000 per 1 s, burst 1,000 on each of the 3 nodes (stack.gatewayNodes)');
    expect(doc).toContain(
      'global-ceiling states 3,000 per 1 s for the fleet; each of the 3 Envoy nodes ships 1,000 per 1 s, burst 1,000, so together they admit 3,000 per 1 s',
    );
    // the worst case: each node's bucket, three times
    expect(doc).toContain('| `global-ceiling` | edge | token bucket | 3,000 per 1 s | 6,000 | (1,000 + 1,000/s x 1 s) x 3 nodes |');
  });

  it('sizes the key counts, memory, maxmemory and the hot shard from the 3,000 req/s the three nodes admit together', () => {
    // 3,000 req/s x the 900 s log: 2.7M usernames
    const login = design.rules.find((r) => r.id === 'auth-login-per-identity')!;
    expect(login.cardinality?.bound).toBe(3000 * 900);
    expect(login.cardinality?.basis).toContain('the ceiling admits 3,000 req/s, 1,000 req/s on each of the 3 Envoy nodes');
    expect(memoryRow(doc, 'auth-login-per-identity')[1]).toBe('2,700,000');
    expect(doc).toContain('maxmemory 1066mb');
    expect(doc).toContain(
      'all the traffic the ceiling admits goes to one flow (the ceiling admits 3,000 req/s, 1,000 req/s on each of the 3 Envoy nodes)',
    );
  });

  it("passes validate's checks as generated, and fails them once a node ships the whole ceiling", () => {
    expect(failures(design, files)).toEqual([]);
    const whole = withFile(files, ENVOY, (c) =>
      c.replace(/max_tokens: 1000\n(\s+)tokens_per_fill: 50\n/, 'max_tokens: 3000\n$1tokens_per_fill: 150\n'),
    );
    expect(failures(design, whole)).toEqual(['complete-rules/edgeNumbersDiffer global-ceiling']);
  });
});

describe('nginx: the ceiling per node with stack.gatewayNodes given, and the fleet sized from the assumed K without it', () => {
  const fixture = 'test/fixtures/edge-cost/keyless-nginx.answers.json';

  describe('stack.gatewayNodes 4', () => {
    const { doc, files, answers } = generated(answersWith(fixture, (a) => (a.stack.gatewayNodes = 4)));
    const design = designOf(answers);
    const conf = files.find((f) => f.path === NGINX)!.content;
    const server = files.find((f) => f.path === 'gateway/nginx-server.conf')!.content;

    it('ships 750 r/s, burst 750 on each node for the 3,000 req/s ceiling; per-IP rules keep their own numbers', () => {
      expect(conf).toMatch(/limit_req_zone \$rl_global_ceiling_key zone=rl_global_ceiling:1m rate=750r\/s;/);
      expect(server).toContain('limit_req zone=rl_global_ceiling burst=750 nodelay;');
      expect(conf).toMatch(/limit_req_zone \$rl_anonymous_per_ip_key zone=rl_anonymous_per_ip:\d+m rate=50r\/s;/);
      expect(doc).toContain('3,000 req/s for the fleet is 750 per 1 s, burst 750 on each of the 4 nodes');
      // a per-IP rule stays per node (one address may reach one node only), and the document says what spreading does
      expect(doc).toContain(
        'That share is per nginx node: each of the 4 nodes counts an address on its own, so an address whose requests are spread over all of them passes up to 4 times it.',
      );
    });

    it('sizes the per-IP keys from the 3,000 req/s the fleet admits, and each zone from what its node admits', () => {
      const perIp = design.rules.find((r) => r.id === 'anonymous-per-ip')!;
      expect(perIp.cardinality?.bound).toBe(3000 * perIp.ttlSeconds!);
      // one node sees at most 750 req/s: a quarter of the keys, at ~128 B a state
      const mb = Math.ceil((750 * perIp.ttlSeconds! * 128) / (1024 * 1024));
      expect(conf).toMatch(new RegExp(`zone=rl_anonymous_per_ip:${mb}m rate=50r/s;`));
      expect(failures(design, files)).toEqual([]);
      const whole = withFile(files, NGINX, (c) => c.replace('rate=750r/s;', 'rate=3000r/s;'));
      expect(failures(design, whole)).toEqual(['complete-rules/edgeNumbersDiffer global-ceiling']);
    });
  });

  describe('no stack.gatewayNodes (2 instances)', () => {
    const { doc, files, answers } = generated(answersWith(fixture, (a) => delete a.stack.gatewayNodes));
    const design = designOf(answers);
    const conf = files.find((f) => f.path === NGINX)!.content;

    it('keeps the full ceiling on each node, and sizes the keys for the 2 assumed nodes, saying so', () => {
      expect(design.scope.gatewayNodes).toBeUndefined();
      expect(design.rules.find((r) => r.id === 'global-ceiling')!.perNode).toBeUndefined();
      expect(conf).toMatch(/zone=rl_global_ceiling:1m rate=3000r\/s;/);
      expect(conf).toContain('the document sizes key counts and memory for K = 2 (assumed, stack.gatewayNodes not given)');
      const perIp = design.rules.find((r) => r.id === 'anonymous-per-ip')!;
      expect(perIp.cardinality?.bound).toBe(2 * 3000 * perIp.ttlSeconds!);
      expect(perIp.cardinality?.basis).toContain(
        'the nginx fleet admits up to 6,000 req/s under the ceiling, 3,000 req/s on each of K = 2 nodes, assumed one per application instance',
      );
      expect(doc).toContain('each node ships the full 3,000 req/s, so the nginx fleet admits up to 6,000 req/s');
      expect(failures(design, files)).toEqual([]);
    });
  });
});

/** The rate limit filter's typed_config in the shipped Envoy file. */
function serviceFilter(files: readonly CodeFile[]): any {
  const doc = parseYaml(files.find((f) => f.path === ENVOY)!.content);
  return doc.http_connection_manager.http_filters.find((f: any) => f.name === 'envoy.filters.http.ratelimit').typed_config;
}

describe("Envoy's one failure_mode_deny follows the modes the rules its rate limit service counts ask for", () => {
  const fixture = 'test/fixtures/review/go-envoy-anonymous.answers.json';

  it('all open (read and search open): false, and every such rule fails open', () => {
    const { files, answers } = generated(path.join(ROOT, fixture));
    const design = designOf(answers);
    expect(serviceFilter(files).failure_mode_deny).toBe(false);
    expect(serviceFilter(files).status_on_error).toBeUndefined();
    expect(design.rules.filter((r) => r.id.startsWith('anonymous-per-ip')).map((r) => r.failMode)).toEqual(['open', 'open']);
    expect(failures(design, files)).toEqual([]);
  });

  it('all closed (read and search closed): true with 503, and validate passes', () => {
    const { doc, files, answers } = generated(
      answersWith(fixture, (a) => Object.assign(a.failure.byClass, { read: 'closed', search: 'closed' })),
    );
    const design = designOf(answers);
    expect(serviceFilter(files).failure_mode_deny).toBe(true);
    expect(serviceFilter(files).status_on_error).toEqual({ code: 'ServiceUnavailable' });
    expect(design.rules.filter((r) => r.id.startsWith('anonymous-per-ip')).map((r) => r.failMode)).toEqual(['closed', 'closed']);
    expect(doc).not.toContain('does not honour');
    expect(failures(design, files)).toEqual([]);
  });

  it('mixed (read closed, search open): true, and the document names the open rule that fails closed at Envoy and why', () => {
    const { doc, files, answers } = generated(answersWith(fixture, (a) => (a.failure.byClass.read = 'closed')));
    const design = designOf(answers);
    // anonymous-per-ip covers read and search (the strictest: closed); its cost-5 split covers search only (open)
    expect(design.scope.envoyDenyRules).toEqual(['anonymous-per-ip']);
    expect(serviceFilter(files).failure_mode_deny).toBe(true);
    expect(design.rules.filter((r) => r.id.startsWith('anonymous-per-ip')).map((r) => r.failMode)).toEqual(['closed', 'closed']);
    const yaml = files.find((f) => f.path === ENVOY)!.content;
    expect(yaml).toContain(
      '# anonymous-per-ip-cost-5: fail closed: while the rate limit service is unreachable, Envoy refuses its requests with 503 (failure_mode_deny true).',
    );
    expect(yaml).toMatch(
      /#\s+The answers ask it to fail open; failure_mode_deny is one setting for every rule the service counts, true because anonymous-per-ip asked to fail closed\./,
    );
    expect(doc).toMatch(
      /`anonymous-per-ip-cost-5`: [^\n]*The answers ask search to fail open: the generated configuration does not honour that, because Envoy's failure_mode_deny is one setting of the rate limit filter, not of a route, and it is true because anonymous-per-ip is asked to fail closed/,
    );
    expect(failures(design, files)).toEqual([]);
    // a file that lets them through again contradicts the document
    const open = withFile(files, ENVOY, (c) => c.replace('failure_mode_deny: true', 'failure_mode_deny: false'));
    expect(failures(design, open)).toEqual([
      'fail-mode/failModeNotShipped anonymous-per-ip',
      'fail-mode/failModeNotShipped anonymous-per-ip-cost-5',
    ]);
  });
});
