/**
 * A design without a store (test/fixtures/review/nestjs-memory-quotas: one NestJS instance, no
 * gateway, stack.store none): every limit, the outbound bucket included, lives in the process.
 * What the document says about buckets, keys, quotas and populations must be what that code does.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { generateCode } from '../../src/codegen/index.js';
import { IN_PROCESS_BYTES_PER_KEY } from '../../src/design/matrix.js';
import { fmtBytes } from '../../src/render/format.js';
import { renderMarkdown } from '../../src/render/markdown/index.js';
import { runCli, tempDir } from '../helpers/cli.js';
import { exampleInput, inputFromAnswers } from './fixtures.js';

const FIXTURE = new URL('../fixtures/review/nestjs-memory-quotas.answers.json', import.meta.url);
const raw = (): Record<string, unknown> => {
  const answers = JSON.parse(readFileSync(FIXTURE, 'utf8'));
  delete answers.$schema;
  return answers;
};
const input = inputFromAnswers(raw());
const md = renderMarkdown(input, { layout: 'single' })[0]?.content ?? '';
const section = (heading: string, next: string): string => md.slice(md.indexOf(heading), md.indexOf(next, md.indexOf(heading)));

describe('outbound limits without a store', () => {
  const outbound = section('## 7. Outbound limits', '## 8. ');

  it('the shipped client keeps the bucket in-process, and the document says so', () => {
    const providers = generateCode(input.design).find((f) => f.path === 'outbound/providers.ts')?.content ?? '';
    expect(providers).toContain('shared: false');
    expect(outbound).toContain("kept in this process's memory (an in-process bucket)");
    expect(outbound).not.toMatch(/shared store|every instance|shared bucket/);
    expect(outbound).toMatch(/\| Stripe \|[^\n]*\| in-process \| `outbound-stripe` \|/);
  });

  it("the Key column holds what the client keys the in-process bucket on: the provider's name in providers.ts", () => {
    const providers = generateCode(input.design).find((f) => f.path === 'outbound/providers.ts')?.content ?? '';
    expect(providers).toContain('["Stripe"]: { name: "Stripe", ruleId: "outbound-stripe", key: "", shared: false');
    expect(outbound).toMatch(/\| in-process \| `outbound-stripe` \| `Stripe` \|/);
    expect(outbound).toContain(
      "The outbound client keeps the in-process bucket in a Map of its own, under the provider's name (the Key column)",
    );
    expect(md).not.toContain('in-process bucket for');
    const matrix = section('#### Rule `outbound-stripe`', '### 2.4');
    expect(matrix).toContain('- **Key pattern:** `Stripe`.');
    expect(matrix).toContain("an entry of the client object's own Map under the provider's name (Stripe)");
  });

  it('constraint 9 passes and says why: one process holds the only bucket', () => {
    expect(md.slice(md.indexOf('## 11. Constraint check'))).toContain(
      '| 9 | Outbound buckets are shared across instances | pass (one instance: its process holds the only bucket for Stripe) | - |',
    );
    const r = runCli(['validate', '--answers', FIXTURE.pathname]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      'PASS  9. Outbound buckets are shared across instances [shared-outbound] (one instance: its process holds the only bucket for Stripe)',
    );
  });

  it('names no store failure the in-process bucket cannot have', () => {
    expect(outbound).not.toContain('STORE_UNAVAILABLE,');
    expect(outbound).toContain('STORE_UNAVAILABLE never comes');
    const rule = input.design.rules.find((r) => r.id === 'outbound-stripe');
    expect(rule?.rationale).not.toContain('when the store is unreachable');
    expect(rule?.cardinality?.basis).not.toContain('outbound-bucket.lua');
  });

  it('alerts and metrics speak of the in-process bucket; the file list of the unused shared path', () => {
    const alert = input.design.monitoring.alerts.find((a) => a.name === 'RateLimitProviderThrottling');
    expect(alert?.condition).toBe('a provider returns 429 despite the in-process bucket');
    expect(md).not.toMatch(/shared bucket/);
    const index = renderMarkdown(input, { layout: 'folder' })
      .map((f) => f.content)
      .join('\n');
    expect(index).toContain('In-process buckets for Stripe, provider 429 handling and the circuit.');
    const code = generateCode(input.design).find((f) => f.path === 'outbound/client.ts');
    expect(code?.description).toMatch(/^Outbound client: an in-process bucket per provider/);
  });

  it('a design with a store keeps its shared bucket and says so', () => {
    const saas = renderMarkdown(exampleInput('saas-platform'), { layout: 'single' })[0]?.content ?? '';
    expect(saas).toContain('kept in the shared store so that every instance draws from the same budget');
    expect(saas).toContain('so every instance stops at once');
    expect(saas).toContain('WAIT_TOO_LONG, CIRCUIT_OPEN, STORE_UNAVAILABLE');
  });
});

describe("the outbound client's in-process bucket: no TTL, bounded by its providers", () => {
  const rule = input.design.rules.find((r) => r.id === 'outbound-stripe');
  const memory = section('### 2.4 Memory estimate', '## 3. ');

  it('states no TTL, since the client never drops the entry, and says what bounds it', () => {
    expect(rule?.ttlSeconds).toBeUndefined();
    const matrix = section('#### Rule `outbound-stripe`', '### 2.4');
    expect(matrix).toContain('**TTL:** none: the outbound client keeps one entry per provider while it lives (the cardinality bound).');
    expect(matrix).not.toMatch(/\*\*TTL:\*\* \d/);
    expect(memory).toContain('Every key of the middleware expires after its TTL');
    expect(memory).toContain("The outbound client's bucket (`outbound-stripe`) has no TTL:");
    // the runtime: one Map keyed by provider name, and no code path that deletes from it
    const client = readFileSync(new URL('../../src/runtime/outbound/client.ts', import.meta.url), 'utf8');
    expect(client).toContain('private readonly local = new Map<string, number>();');
    expect(client).not.toMatch(/this\.local\.(delete|clear)\(/);
  });

  it('prices its entry in the memory table, as measured in a real heap (node --expose-gc)', () => {
    const bytes = IN_PROCESS_BYTES_PER_KEY['outbound-bucket'];
    expect(memory).toContain(`| \`outbound-stripe\` | 1 | 6 | ${bytes} | ${fmtBytes(bytes)} |`);
    const client = pathToFileURL(path.resolve('dist/runtime/outbound/client.js')).href;
    // one client with N in-process providers, its circuits made first (circuitState); each process
    // then books N calls, on N providers or all on one: the heap differs by N - 1 bucket entries
    const heapAfter = (spread: boolean): number => {
      const script = `
        const { OutboundClient } = await import(${JSON.stringify(client)});
        const N = 100000, providers = {};
        for (let i = 0; i < N; i++) {
          const name = 'p' + String(i).padStart(14, '0');
          providers[name] = { name, ruleId: 'r', key: '', shared: false, rate: 1e9, periodMs: 1000, burst: 10 };
        }
        const circuit = { failureThreshold: 3, windowMs: 30000, openMs: 30000, halfOpenProbes: 1 };
        const c = new OutboundClient({ defaultMode: 'enforce' }, { providers, circuit, script: { sha1: '', source: '' } });
        globalThis.kept = c; // reachable through the measurement (a dead local would be collected)
        const names = Object.keys(providers);
        for (const n of names) c.circuitState(n);
        for (const n of names) await c.schedule(${spread ? 'n' : 'names[0]'}, () => 1);
        for (let i = 0; i < 3; i++) { gc(); await new Promise((r) => setTimeout(r, 10)); }
        console.log(process.memoryUsage().heapUsed);`;
      const r = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      return Number(r.stdout.trim());
    };
    const measured = (heapAfter(true) - heapAfter(false)) / (100000 - 1);
    expect(measured).toBeLessThanOrEqual(bytes);
    expect(measured).toBeGreaterThan(bytes / 2);
  });

  it('constraint 6 passes by its bound and says so, in the document and in validate', () => {
    expect(md.slice(md.indexOf('## 11. Constraint check'))).toContain(
      '| 6 | Every key has a TTL; key cardinality is bounded and stated | pass (outbound-stripe has no TTL: one in-process entry per provider, bounded by the providers) | - |',
    );
    const r = runCli(['validate', '--answers', FIXTURE.pathname]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('(outbound-stripe has no TTL: one in-process entry per provider, bounded by the providers)');
  });
});

describe('monitoring without a store', () => {
  const metrics = section('### 8.1 Metrics', '### 8.2 ');
  const alerts = section('### 8.2 Alerts', '### 8.3 ');

  it('lists no metric or alert of store calls, and says the shipped code keeps those at 0', () => {
    for (const name of ['ratelimit_store_latency_ms', 'ratelimit_store_failures_total', 'ratelimit_fail_open_events_total']) {
      expect(metrics).not.toContain(`| \`${name}\` |`);
      expect(alerts).not.toContain(name);
    }
    expect(metrics).toContain(
      "No rule keeps its state in a store, so this table leaves out the metrics of store calls, and no alert reads them. The shipped code still registers them (the middleware: ratelimit_store_failures_total and ratelimit_fail_open_events_total, a series per rule, and the histogram ratelimit_store_latency_ms; the outbound client's outboundMetrics: ratelimit_store_failures_total, a series per provider), every counter series at 0",
    );
    expect(alerts).not.toMatch(/RateLimitStore|RateLimitFailOpen|RateLimitKeyCardinality/);
  });

  it('the alerts table is the shipped rules file, rule for rule', () => {
    const file = generateCode(input.design).find((f) => f.path === 'monitoring/ratelimit-alerts.yaml')?.content ?? '';
    const shipped = [...file.matchAll(/^ {6}- alert: (\w+)$/gm)].map((m) => m[1]);
    const stated = [...alerts.matchAll(/^\| (RateLimit\w+) \|/gm)].map((m) => m[1]);
    expect(shipped).toEqual(['RateLimitThrottleSpike', 'RateLimitRareRuleFiring', 'RateLimitNearLimit', 'RateLimitProviderThrottling']);
    expect(stated).toEqual(shipped);
  });

  it('a design with a store keeps its store metrics in the table', () => {
    const saas = renderMarkdown(exampleInput('saas-platform'), { layout: 'single' })[0]?.content ?? '';
    expect(saas).toContain('| `ratelimit_store_failures_total` | counter |');
    expect(saas).not.toContain('this table leaves out the metrics of store calls');
  });
});

describe('rollout without a store', () => {
  const step = input.design.rollout.steps.find((s) => s.title === 'Shadow mode');

  it('speaks of no hash or key an earlier deploy wrote, and says every restart starts the counters at 0', () => {
    expect(step?.detail).not.toContain('per-limit keys');
    expect(step?.detail).not.toContain("hash's fields");
    expect(step?.detail).toContain('every deploy and every restart starts the buckets full and the counters at 0, quotas included');
  });
});

describe('quotas kept in process memory', () => {
  it('the quota section says plainly that they restart at 0', () => {
    const quotas = section('## 6. Quotas', '## 7. ');
    expect(quotas).toContain("**Warning: the quotas (quota-starter and quota-business) are counted in the process's memory");
    expect(quotas).toContain("every restart, crash or deploy sets every caller's usage back to 0");
    expect(quotas).not.toContain('when the store fails open');
  });

  it('generate warns on stderr with the same text', () => {
    const dir = tempDir();
    const r = runCli([
      'generate',
      '--answers',
      FIXTURE.pathname,
      '--date',
      '2026-12-06',
      '--out',
      path.join(dir, 'design'),
      '--code-dir',
      path.join(dir, 'rl'),
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("warning: the quotas (quota-starter and quota-business) are counted in the process's memory");
  });

  it('a design whose quotas live in the store has no such warning', () => {
    expect(exampleInput('saas-platform').design.quotas?.inProcess).toBeUndefined();
  });
});

describe('populations and the identity fallback name only what the design has', () => {
  it('the assumed tenants and users are derived from the stated clients, not from API keys', () => {
    const assumptions = section('### 1.3 Assumptions', '## 2. ');
    expect(assumptions).toContain('assumed one per 5 of the 300 clients stated in traffic.distinctClients (60)');
    expect(assumptions).toContain('assumed 10 per client of the 300 stated in traffic.distinctClients (3,000)');
    expect(assumptions).not.toContain('API key');
  });

  it('the fallback order lists the design identities, and the runtime order for the others', () => {
    expect(md).toContain('in the order user, tenant, client IP, with the same numbers (the answers list no API key or session;');
    const limiter = readFileSync(new URL('../../src/runtime/middleware/limiter.ts', import.meta.url), 'utf8');
    expect(limiter).toContain("const FALLBACK_ORDER: readonly IdentityKind[] = ['api-key', 'user', 'tenant', 'session', 'ip'];");
    expect(md).toContain('the middleware tries it in its place in the order API key, user, tenant, session, client IP)');
  });
});

describe('the memory estimate without a store', () => {
  const store = input.design.monitoring.store;

  it('prices every in-process key, so the bytes agree with the key count', () => {
    const inProcess = input.design.rules.filter((r) => r.layer === 'middleware');
    for (const r of inProcess) expect(r.bytesPerKey, r.id).toBeGreaterThan(0);
    // 162,000 auth keys under an attack at the ceiling, each a Map entry of a few hundred bytes
    expect(store.estimatedKeys).toBe(162_062);
    expect(store.estimatedBytes).toBeGreaterThan(store.estimatedKeys * IN_PROCESS_BYTES_PER_KEY.gcra);
  });

  it("says the estimate is of the process's heap, with no redis.conf and no store round trip", () => {
    const monitoring = section('### 8.3 Store configuration', '## 9. ');
    expect(monitoring).toContain(`estimated memory: ${fmtBytes(store.estimatedBytes)} of the process's heap`);
    expect(monitoring).not.toContain('redis.conf');
    expect(md).not.toContain('The limiter adds a store round trip');
    expect(section('### 2.4 Memory estimate', '## 3. ')).toContain('as measured on Node 20 (V8)');
  });

  it('holds the figures the runtime memory store takes in a real heap (node --expose-gc)', () => {
    const store = pathToFileURL(path.resolve('dist/runtime/middleware/memory-store.js')).href;
    const script = `
      const { MemoryStore } = await import(${JSON.stringify(store)});
      const N = 100000, end = Date.now() + 30 * 86400e3, out = {};
      const kinds = {
        gcra: (s, k) => s.run('gcra', [k], [5e6, 1e6, 1e6]),
        log: (s, k) => s.run('sliding-window-log', [k], [10, 900, 1]),
        window: (s, k) => s.run('fixed-window', [k], ['calendar', 100, 1, end, 60000]),
        hash3: (s, k) => s.run('identity-limits', [k], ['a', 'g', 5e6, 1e6, 'b', 'g', 3e6, 5e4, 'quota', 'w', 100000, end, 1]),
      };
      const keep = [];
      for (const [name, fill] of Object.entries(kinds)) {
        gc(); gc();
        const before = process.memoryUsage().heapUsed;
        const s = new MemoryStore();
        for (let i = 0; i < N; i++) fill(s, 'rl:' + (String(i) + 'xxxxxxxxxxxx').slice(0, 12));
        gc(); gc();
        out[name] = (process.memoryUsage().heapUsed - before) / N;
        keep.push(s);
      }
      console.log(JSON.stringify(out), keep.length);`;
    const r = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const measured = JSON.parse(r.stdout.split(' ')[0] ?? '{}');
    const F = IN_PROCESS_BYTES_PER_KEY;
    expect(measured.gcra).toBeLessThanOrEqual(F.gcra);
    expect(measured.log).toBeLessThanOrEqual(F['sliding-window-log']);
    expect(measured.window).toBeLessThanOrEqual(F['fixed-window']);
    expect(measured.hash3).toBeLessThanOrEqual(F['identity-hash-base'] + 3 * F['identity-hash-field']);
    // and not a wild overstatement either
    expect(measured.gcra).toBeGreaterThan(F.gcra / 2);
  });
});

describe('beside a Redis store, an outbound bucket kept in each instance is priced in the heap, as with no store', () => {
  const answers = raw();
  const stack = answers.stack as Record<string, unknown>;
  const outbound = answers.outbound as Record<string, unknown>[];
  const withStore = inputFromAnswers({
    ...answers,
    stack: { ...stack, store: 'redis' },
    outbound: outbound.map((p) => ({ ...p, bucket: 'per-instance' })),
  });
  const text = renderMarkdown(withStore, { layout: 'single' })[0]?.content ?? '';
  const memory = text.slice(text.indexOf('### 2.4 Memory estimate'), text.indexOf('## 3. ', text.indexOf('### 2.4 Memory estimate')));

  it("gives the measured heap figure in its row, not 'not stated', and leaves it out of the store's total", () => {
    const rule = withStore.design.rules.find((r) => r.id === 'outbound-stripe');
    expect(rule?.primitive).toBe('in-process');
    const bytes = IN_PROCESS_BYTES_PER_KEY['outbound-bucket'];
    expect(memory).toContain(
      `| \`outbound-stripe\` | 1 | 6 | ${bytes} (heap) | ${fmtBytes(bytes)} in each instance's heap, not the store |`,
    );
    expect(memory).not.toMatch(/\| `outbound-stripe` \|[^\n]*not stated/);
    expect(memory).toContain("The outbound client's bucket (`outbound-stripe`) is kept in each\ninstance's memory, not in the store");
    // the store's total is the sum of the store rows only
    const storeBytes = withStore.design.monitoring.store.estimatedBytes;
    const rows = withStore.design.rules.filter((r) => r.layer !== 'edge' && r.field === undefined && r.bytesPerKey !== undefined);
    expect(rows.some((r) => r.id === 'outbound-stripe')).toBe(false);
    expect(storeBytes).toBeGreaterThan(0);
  });
});
