/**
 * The edge rules' refusals as a metric: a real nginx runs the generated config, a burst trips
 * the anonymous per-IP zone, and the generated monitoring/nginx-ratelimit.mtail, run by a real
 * mtail over nginx's error log, exports ratelimit_throttled_total{rule, mode} with exactly the
 * refusals nginx made (mode="enforce"), or would have made in shadow mode (mode="shadow"). That
 * is the series RateLimitRareRuleFiring and RateLimitThrottleSpike read for the edge rules.
 * mtail comes from Debian's mtail package (scripts/setup.sh installs it).
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { generateCode } from '../../src/codegen/index.js';
import { NGINX_MTAIL_PATH, nginxLogMetrics } from '../../src/codegen/alerts.js';
import { generateNginx } from '../../src/codegen/gateway/nginx.js';
import { exampleDesign, exampleNames } from '../helpers/examples.js';
import { burst, nginxPrefix, startNginx } from './support/nginx.js';

function mtail(): string {
  for (const d of [...(process.env.PATH ?? '').split(delimiter), '/usr/bin', '/usr/local/bin']) {
    try {
      accessSync(join(d, 'mtail'), constants.X_OK);
      return join(d, 'mtail');
    } catch {
      // next
    }
  }
  throw new Error('mtail not found: run scripts/setup.sh (apt-get install -y mtail)');
}

/** The program's metrics after reading `log` once: "rule/mode" -> value. */
async function runMtail(program: string, log: string): Promise<Map<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), 'rl-mtail-'));
  try {
    writeFileSync(join(dir, 'nginx-ratelimit.mtail'), program);
    const { stdout } = await promisify(execFile)(
      mtail(),
      ['--one_shot', '--one_shot_format', 'prometheus', '--progs', dir, '--logs', log, '--logtostderr'],
      { timeout: 60_000 },
    );
    const out = new Map<string, number>();
    for (const line of stdout.split('\n')) {
      const m = /^ratelimit_throttled_total\{(.*)\} (\S+)$/.exec(line);
      if (!m) continue;
      const labels = Object.fromEntries([...(m[1] as string).matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
      out.set(`${labels.rule}/${labels.mode}`, Number(m[2]));
    }
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const design = exampleDesign('saas-platform');
const program = nginxLogMetrics(design) as string;
const CATALOG = '/v1/catalog';

async function run(dryRun: boolean): Promise<{ refused: number; metrics: Map<string, number> }> {
  const prefix = await nginxPrefix(generateNginx(design), (c) =>
    dryRun ? c : c.replace('limit_req_dry_run on;', 'limit_req_dry_run off;'),
  );
  try {
    const nginx = await startNginx(prefix);
    let replies;
    try {
      // anonymous-per-ip: 50 r/s, burst 500 per client IP
      replies = await burst(nginx.port, 700, CATALOG);
    } finally {
      await nginx.stop();
    }
    return {
      refused: replies.filter((r) => r.status === 429).length,
      metrics: await runMtail(program, join(prefix.dir, 'logs', 'error.log')),
    };
  } finally {
    prefix.remove();
  }
}

describe('monitoring/nginx-ratelimit.mtail', () => {
  it('is generated (and listed) only for designs whose edge rules nginx enforces', () => {
    for (const name of exampleNames()) {
      const d = exampleDesign(name);
      const files = generateCode(d).map((f) => f.path);
      expect(files.includes(NGINX_MTAIL_PATH), name).toBe(d.scope.gateway === 'nginx');
    }
    expect(program).toContain('counter ratelimit_throttled_total by rule, mode');
    expect(program).toContain('by zone "rl_global_ceiling"');
    expect(program).toContain('ratelimit_throttled_total["anonymous-per-ip"]["shadow"]++');
  });

  it('counts every refusal nginx makes, per rule, as mode="enforce"; the other rule exists at 0', async () => {
    const { refused, metrics } = await run(false);
    expect(refused).toBeGreaterThan(0);
    expect(metrics.get('anonymous-per-ip/enforce')).toBe(refused);
    expect(metrics.get('anonymous-per-ip/shadow')).toBe(0);
    expect(metrics.get('global-ceiling/enforce')).toBe(0);
    expect(metrics.get('global-ceiling/shadow')).toBe(0);
  });

  it('in shadow mode (dry run) refuses nothing and counts the would-be refusals as mode="shadow"', async () => {
    const { refused, metrics } = await run(true);
    expect(refused).toBe(0);
    expect(metrics.get('anonymous-per-ip/shadow')).toBeGreaterThan(0);
    expect(metrics.get('anonymous-per-ip/enforce')).toBe(0);
  });
});
