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

function write(rules: unknown[]): string {
  const dir = tempDir();
  writeFileSync(path.join(dir, 'a.json'), JSON.stringify({ ...saas, rules }, null, 2));
  return dir;
}

function generate(dir: string): ReturnType<typeof runCli> {
  return runCli(['generate', '-a', 'a.json', '--out', 'out/', '--code-dir', 'code/', '--format', 'markdown', '--date', '2026-12-03'], {
    cwd: dir,
  });
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
    const dir = write([signup]);
    for (const r of [generate(dir), runCli(['validate', '-a', 'a.json'], { cwd: dir })]) {
      expect(r.code, r.stderr + r.stdout).toBe(2);
      expect(r.stderr).toContain('$.rules[0].rate: 5 per hour at the edge cannot be counted by nginx limit_req');
      expect(r.stderr).toContain('would admit 1 per minute, 12 times what the entry asks');
      expect(r.stderr).toContain('layer "middleware"');
    }
    expect(existsSync(path.join(dir, 'out'))).toBe(false);
    expect(existsSync(path.join(dir, 'code'))).toBe(false);
  });

  it('5 per hour kept in the application: the document states it there, nginx -t accepts a file without it', async () => {
    const dir = write([
      {
        ...signup,
        layer: 'middleware',
        algorithm: 'sliding-window-log',
        primitive: 'redis-lua',
        cost: 1,
        failMode: 'closed',
        ttlSeconds: 3600,
        cardinalityBound: 100_000,
      },
    ]);
    const r = generate(dir);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(r.stdout).toContain('Constraints: 9 of 9 pass.');
    const { http, server } = await nginxAccepts(dir);
    expect(http).not.toContain('signup');
    expect(server).not.toContain('signup');
    expect(readFileSync(path.join(dir, 'code', 'middleware', 'design.ts'), 'utf8')).toContain('"signup-per-ip"');
    const matrix = readFileSync(path.join(dir, 'out', '01-scope-and-limit-matrix.md'), 'utf8');
    expect(matrix).toMatch(/\| \[`signup-per-ip`\]\(#rule-signup-per-ip\) \|[^\n]*\| 5 \/ 1 h[^\n]*\| middleware \|/);
  });

  it('2 per minute at the edge: shipped as 2r/m, which nginx -t accepts, and validate passes', async () => {
    const dir = write([{ ...signup, rate: { requests: 2, per: 'minute' } }]);
    const r = generate(dir);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const { http, server } = await nginxAccepts(dir);
    expect(http).toMatch(/limit_req_zone \$rl_signup_per_ip_key zone=rl_signup_per_ip:\d+m rate=2r\/m;/);
    expect(server).toContain('limit_req zone=rl_signup_per_ip burst=2 nodelay;');
    const v = runCli(['validate', '-a', 'a.json'], { cwd: dir });
    expect(v.code, v.stdout + v.stderr).toBe(0);
  });
});
