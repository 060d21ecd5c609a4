/**
 * A rule slower than nginx can count, placed at the edge: generate and validate exit 2 naming the
 * field and write nothing, rather than ship a laxer limit_req. Kept in the application, or at a
 * rate nginx counts, generate writes an nginx configuration that the real `nginx -t` accepts.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/examples.js';
import { runCli, tempDir } from '../helpers/cli.js';
import { nginxPrefix, nginxTest } from '../codegen/support/nginx.js';

const saas = JSON.parse(readFileSync(path.join(ROOT, 'examples/saas-platform.answers.json'), 'utf8'));
delete saas.$schema;
delete saas.openapi;

const signup = { id: 'signup-per-ip', identity: 'ip', endpoints: ['login'], rate: { requests: 5, per: 'hour' }, layer: 'edge' };

/** A folder with a.json: the saas example with `traffic` and `stack` changed, endpoints mapped, and the given rules entries. */
function answersDir(change: { traffic?: object; stack?: object; endpoints?: (e: any) => any; rules?: unknown[] }): string {
  const dir = tempDir();
  const a = {
    ...saas,
    traffic: { ...saas.traffic, ...change.traffic },
    stack: { ...saas.stack, ...change.stack },
    endpoints: change.endpoints ? saas.endpoints.map(change.endpoints) : saas.endpoints,
    rules: change.rules ?? [],
  };
  writeFileSync(path.join(dir, 'a.json'), JSON.stringify(a, null, 2));
  return dir;
}

/** A rules entry that keeps the rule `id` (its other fields as given) in the middleware. */
function inApplication(entry: { id: string } & Record<string, unknown>, algorithm: string, failMode: 'open' | 'closed'): object {
  return {
    ...entry,
    layer: 'middleware',
    algorithm,
    primitive: 'redis-lua',
    cost: 1,
    failMode,
    ttlSeconds: 3600,
    cardinalityBound: 100_000,
  };
}

function generate(dir: string): ReturnType<typeof runCli> {
  return runCli(['generate', '-a', 'a.json', '--out', 'out/', '--code-dir', 'code/', '--format', 'markdown', '--date', '2026-12-03'], {
    cwd: dir,
  });
}

/** generate (and validate, unless told not to) exit 2 saying each of `messages`, and write nothing. */
function expectRefused(dir: string, messages: string[], { validate = true } = {}): void {
  for (const r of [generate(dir), ...(validate ? [runCli(['validate', '-a', 'a.json'], { cwd: dir })] : [])]) {
    expect(r.code, r.stderr + r.stdout).toBe(2);
    for (const m of messages) expect(r.stderr).toContain(m);
  }
  expect(existsSync(path.join(dir, 'out'))).toBe(false);
  expect(existsSync(path.join(dir, 'code'))).toBe(false);
}

/** generate exits 0 with every constraint passing. */
function expectGenerated(dir: string): ReturnType<typeof runCli> {
  const r = generate(dir);
  expect(r.code, r.stderr + r.stdout).toBe(0);
  expect(r.stdout).toContain('Constraints: 9 of 9 pass.');
  return r;
}

async function nginxAccepts(dir: string): Promise<{ http: string; server: string }> {
  const files = ['gateway/nginx.conf', 'gateway/nginx-server.conf'].map((p) => ({
    path: p,
    language: 'nginx',
    description: '',
    content: readFileSync(path.join(dir, 'code', p), 'utf8'),
  }));
  const prefix = await nginxPrefix(files);
  try {
    const result = await nginxTest(prefix);
    expect(result.ok, result.output).toBe(true);
    expect(result.output).toContain('syntax is ok');
  } finally {
    prefix.remove();
  }
  return { http: files[0]!.content, server: files[1]!.content };
}

describe('a rule nginx can only count more leniently', () => {
  it('5 per hour at the edge: generate and validate exit 2, name the field, and write nothing', () => {
    expectRefused(answersDir({ rules: [signup] }), [
      '$.rules[0].rate: 5 per hour at the edge cannot be counted by nginx limit_req',
      'would admit 1 per minute, 12 times what the entry asks',
      'layer "middleware"',
    ]);
  });

  it('5 per hour kept in the application: the document states it there, nginx -t accepts a file without it', async () => {
    const dir = answersDir({ rules: [inApplication(signup, 'sliding-window-log', 'closed')] });
    expectGenerated(dir);
    const { http, server } = await nginxAccepts(dir);
    expect(http).not.toContain('signup');
    expect(server).not.toContain('signup');
    expect(readFileSync(path.join(dir, 'code', 'middleware', 'design.ts'), 'utf8')).toContain('"signup-per-ip"');
    const matrix = readFileSync(path.join(dir, 'out', '01-scope-and-limit-matrix.md'), 'utf8');
    expect(matrix).toMatch(/\| \[`signup-per-ip`\]\(#rule-signup-per-ip\) \|[^\n]*\| 5 \/ 1 h[^\n]*\| middleware \|/);
  });

  it('2 per minute at the edge: shipped as 2r/m, which nginx -t accepts, and validate passes', async () => {
    const dir = answersDir({ rules: [{ ...signup, rate: { requests: 2, per: 'minute' } }] });
    expectGenerated(dir);
    const { http, server } = await nginxAccepts(dir);
    expect(http).toMatch(/limit_req_zone \$rl_signup_per_ip_key zone=rl_signup_per_ip:\d+m rate=2r\/m;/);
    expect(server).toContain('limit_req zone=rl_signup_per_ip burst=2 nodelay;');
    const v = runCli(['validate', '-a', 'a.json'], { cwd: dir });
    expect(v.code, v.stdout + v.stderr).toBe(0);
  });
});

// 0.001 req/s per client x 5 behind one address = 18 per hour per IP: nginx counts no fewer than 1 per minute
const SLOW_IP = { traffic: { clientPeakRps: 0.001, clientsPerAddress: 5 } };

describe('a rule the design derives for the edge that nginx can only count more leniently', () => {
  it('a per-IP rate of 18 per hour: generate and validate exit 2 naming traffic.clientPeakRps, and write nothing', () => {
    expectRefused(answersDir(SLOW_IP), [
      "$.traffic.clientPeakRps: the design's edge rule anonymous-per-ip states 18 per hour",
      'so its file would admit 1 per minute, 3.3 times the rate the design states',
      '{"id": "anonymous-per-ip", "layer": "middleware", ...}',
    ]);
  });

  it('a split by endpoint cost slower than 1 per minute: refused naming the endpoint cost', () => {
    // 0.5 req/s per IP is 30 units a minute; public-catalog at cost 50 would be 1 per 100 s
    const dir = answersDir({
      traffic: { clientPeakRps: 0.1, clientsPerAddress: 5 },
      endpoints: (e: any) => (e.name === 'public-catalog' ? { ...e, cost: 50 } : e),
    });
    const at = saas.endpoints.findIndex((e: any) => e.name === 'public-catalog');
    expectRefused(
      dir,
      [
        `$.endpoints[${at}].cost: the design's edge rule anonymous-per-ip counts public-catalog at anonymous-per-ip's 30 per minute divided by its cost of 50: 1 per 100 s`,
        '1.7 times the rate the design states',
      ],
      { validate: false },
    );
  });

  it('the same per-IP rule kept in the application by a rules entry: 18 per hour in the middleware, nginx -t accepts a file without it', async () => {
    const dir = answersDir({ ...SLOW_IP, rules: [inApplication({ id: 'anonymous-per-ip' }, 'gcra', 'open')] });
    expectGenerated(dir);
    const { http, server } = await nginxAccepts(dir);
    expect(http).not.toContain('anonymous_per_ip');
    expect(server).not.toContain('anonymous-per-ip');
    const matrix = readFileSync(path.join(dir, 'out', '01-scope-and-limit-matrix.md'), 'utf8');
    expect(matrix).toMatch(/\| \[`anonymous-per-ip`\]\(#rule-anonymous-per-ip\) \|[^\n]*\| 18 \/ 1 h[^\n]*\| middleware \|/);
  });
});

// a ceiling of 2 req/s (peak 1 x headroom 2): shared over K nginx nodes, each node admits at least 1 per second
const TINY_CEILING = { traffic: { peakRps: 1, typicalRps: 0.5, headroom: 2 } };

describe('a tiny fleet-wide ceiling shared over K nginx nodes', () => {
  it('3 nodes: each ships 1r/s, the document and generate state the true 3 per second with a warning, and nginx -t accepts it', async () => {
    const dir = answersDir({ ...TINY_CEILING, stack: { gatewayNodes: 3 } });
    const r = expectGenerated(dir);
    expect(r.stderr).toContain(
      "warning: global-ceiling's 2 per second and burst 2 divided by the 3 nginx nodes (stack.gatewayNodes) are less than one node admits at the least, so each node ships 1 per second, burst 1 and the fleet admits up to 3 per second, 1.5 times the stated figure, and a burst of up to 3, 1.5 times the stated 2",
    );
    const { http } = await nginxAccepts(dir);
    expect(http).toMatch(/zone=rl_global_ceiling:\d+m rate=1r\/s;/);
    expect(http).toContain('Warning: global-ceiling');
    expect(http).not.toContain('rounded down: 1 per 1 s');
    const placement = readFileSync(path.join(dir, 'out', '03-algorithms-and-enforcement.md'), 'utf8');
    expect(placement).toContain('so together they admit 3 per 1 s, burst 3. Warning: global-ceiling');
    expect(placement).not.toMatch(/together they admit 3 per 1 s \(with uneven load balancing[^)]*never more\)/);
  });

  it('5 nodes would admit 5 per second, 2.5 times the ceiling: exit 2 naming stack.gatewayNodes and the rule, nothing written', () => {
    expectRefused(answersDir({ ...TINY_CEILING, stack: { gatewayNodes: 5 } }), [
      '$.stack.gatewayNodes: 5 nginx nodes each count global-ceiling (2 per second for the fleet) on their own, and a node admits no less than 1 per second, so together they would admit 5 per second, 2.5 times the stated figure',
      'at most 4 nodes for this figure',
    ]);
  });
});
