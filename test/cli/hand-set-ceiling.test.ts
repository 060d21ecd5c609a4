/**
 * A ceiling whose rate a rules entry sets by hand: the rules sized as a share of it never ship a
 * rate above the ceiling itself, and the document states every floor that raised one; the
 * shipped files (middleware/design.ts, the gateway's configuration) carry what the document says.
 */
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { generatedFiles, runCli, tempDir } from '../helpers/cli.js';

const DATE = '2026-12-02';

function answersFile(overrides: Record<string, unknown>): string {
  const a = {
    project: { name: 'tiny' },
    output: { format: 'markdown', layout: 'single' },
    goals: ['abuse', 'overload'],
    stack: { language: 'TypeScript', framework: 'express', topology: 'single', gateway: 'none', store: 'redis' },
    identities: ['ip'],
    endpoints: [
      { name: 'feed', method: 'GET', route: '/api/feed', class: 'read', anonymous: true },
      { name: 'hook', method: 'POST', route: '/hooks/in', class: 'webhook' },
    ],
    traffic: { typicalRps: 0.05, peakRps: 0.08, burstiness: 'moderate' },
    rules: [{ id: 'global-ceiling', rate: { requests: 6, per: 'minute' } }],
    ...overrides,
  };
  const file = path.join(tempDir(), 'tiny.answers.json');
  writeFileSync(file, JSON.stringify(a));
  return file;
}

/** A rule's rate as middleware/design.ts ships it, in requests per second. */
function shippedRps(files: { path: string; content: string }[], id: string): number {
  const design = files.find((f) => f.path === 'middleware/design.ts')?.content ?? '';
  const at = design.indexOf(`id: "${id}"`);
  expect(at, `${id} in middleware/design.ts`).toBeGreaterThan(-1);
  const block = design.slice(at, design.indexOf('\n    },', at));
  const limit = Number(/\n\s*limit: ([\d.]+),/.exec(block)?.[1]);
  const period = Number(/\n\s*periodSeconds: ([\d.]+),/.exec(block)?.[1]);
  return limit / period;
}

/** A rule's burst as middleware/design.ts ships it. */
function shippedBurst(files: { path: string; content: string }[], id: string): number {
  const design = files.find((f) => f.path === 'middleware/design.ts')?.content ?? '';
  const at = design.indexOf(`id: "${id}"`);
  expect(at, `${id} in middleware/design.ts`).toBeGreaterThan(-1);
  const block = design.slice(at, design.indexOf('\n    },', at));
  return Number(/\n\s*burst: ([\d.]+),/.exec(block)?.[1]);
}

/** The matrix row of a rule: its rate column. */
function matrixRate(doc: string, id: string): string {
  const row = doc.split('\n').find((l) => l.startsWith(`| [\`${id}\`]`)) ?? '';
  return row.split(' | ')[3] ?? '';
}

describe('rules sized as a share of a hand-set ceiling', () => {
  it('never ship a rate above the ceiling (per-IP, webhook and per-key fairness, middleware)', () => {
    const { doc, files } = generatedFiles(answersFile({}), DATE);
    for (const id of ['anonymous-per-ip', 'webhooks-per-source']) {
      expect(shippedRps(files, id), id).toBeLessThanOrEqual(0.1 + 1e-12);
      expect(matrixRate(doc, id), id).toBe('6 / 60 s, burst 1');
    }
    // the floors that raised the share are stated, and so is the hold at the ceiling
    expect(doc).toContain(
      "capped at a tenth of the 0.1 req/s ceiling (set by hand in its rules entry) (0.01 req/s), raised to one client's 2 req/s, so that a client alone behind its address is never refused by it, then held at the ceiling's own 0.1 req/s",
    );
    expect(doc).toContain("- `webhooks-per-source`: 0.1 req/s = the 10 req/s floor, held at the ceiling's own rate; burst 1");
    expect(doc).not.toContain('so scraping from one address stays a small share');
    expect(doc).not.toMatch(/rounded to 2 req\/s/);

    const keyed = generatedFiles(
      answersFile({
        identities: ['api-key'],
        endpoints: [{ name: 'feed', method: 'GET', route: '/api/feed', class: 'read' }],
        traffic: { typicalRps: 0.05, peakRps: 0.08, burstiness: 'moderate', distinctClients: 100 },
      }),
      DATE,
    );
    expect(shippedRps(keyed.files, 'fairness-per-api-key')).toBeLessThanOrEqual(0.1 + 1e-12);
    expect(keyed.doc).toContain(
      "- `fairness-per-api-key`: 0.1 req/s = a tenth of the ceiling (0.1 req/s, set by hand in its rules entry), raised to 1 req/s, held at the ceiling's own rate;",
    );
    expect(keyed.doc).not.toContain('rounded down to 1 req/s');
  });

  it('never ship a rate above the ceiling at the edge (nginx)', () => {
    const { doc, files } = generatedFiles(
      answersFile({ stack: { language: 'TypeScript', framework: 'express', topology: 'single', gateway: 'nginx', store: 'redis' } }),
      DATE,
    );
    const nginx = files.find((f) => f.path === 'gateway/nginx.conf')?.content ?? '';
    expect(nginx).toMatch(/zone=rl_anonymous_per_ip:\S+ rate=6r\/m;/);
    expect(matrixRate(doc, 'anonymous-per-ip')).toBe('6 / 60 s, burst 1');
  });

  it('state the 1 req/s floor where it raises the share, below the ceiling', () => {
    // a 5 req/s ceiling: a tenth is 0.5 req/s, one client sends 0.2: raised to 1 req/s, which fits under the ceiling
    const { doc, files } = generatedFiles(
      answersFile({
        traffic: { typicalRps: 1, peakRps: 3, burstiness: 'moderate', clientPeakRps: 0.2 },
        rules: [{ id: 'global-ceiling', rate: { requests: 5, per: 'second' } }],
      }),
      DATE,
    );
    expect(shippedRps(files, 'anonymous-per-ip')).toBe(1);
    expect(doc).toContain('(0.5 req/s), raised to 1 req/s, the least the design sizes a per-address limit at');
    expect(doc).toContain('more than the tenth of the ceiling the design keeps an address to');
  });
});

describe('a rules entry that moves the ceiling', () => {
  const nginx = { language: 'TypeScript', framework: 'express', topology: 'horizontal', instances: 2, gateway: 'nginx', store: 'redis' };
  const traffic = { typicalRps: 100, peakRps: 400, burstiness: 'moderate' };

  it('into the middleware (layer only) ships and documents the middleware ceiling, not the gateway one', () => {
    const file = answersFile({ stack: nginx, traffic, rules: [{ id: 'global-ceiling', layer: 'middleware' }] });
    const { doc, files } = generatedFiles(file, DATE);
    const section = doc.slice(
      doc.indexOf('#### Rule `global-ceiling`'),
      doc.indexOf('#### Rule', doc.indexOf('#### Rule `global-ceiling`') + 1),
    );
    expect(section).toContain('**Key pattern:** `rl:{global}:ceiling`');
    expect(section).toContain('**Algorithm:** GCRA.');
    expect(section).toContain(
      'Its rules entry keeps it in the middleware (layer), so the first middleware check enforces it, not nginx limit_req',
    );
    expect(section).not.toContain('Enforced by nginx');
    expect(doc).not.toContain('| `global-ceiling` | 1 | not stated |');
    // the shipped files: the middleware counts it in Redis under its own key; nginx does not count it
    const design = files.find((f) => f.path === 'middleware/design.ts')?.content ?? '';
    const block = design.slice(design.indexOf('id: "global-ceiling"'), design.indexOf('\n    },', design.indexOf('id: "global-ceiling"')));
    expect(block).toContain('key: "{global}:ceiling"');
    expect(block).toContain('store: "redis"');
    expect(files.find((f) => f.path === 'gateway/nginx.conf')?.content).not.toContain('rl_global_ceiling');
  });

  it('is refused where nothing would enforce it, or with a primitive where it is not counted (exit 2, no output)', () => {
    for (const [stack, rule, field] of [
      [
        { ...nginx, gateway: 'none' },
        { id: 'global-ceiling', layer: 'edge' },
        '$.rules[0].layer: "edge" places global-ceiling at the gateway',
      ],
      [
        nginx,
        { id: 'global-ceiling', layer: 'middleware', primitive: 'gateway-native' },
        '$.rules[0].primitive: global-ceiling is counted in the middleware',
      ],
    ] as const) {
      const file = answersFile({ stack, traffic, rules: [rule] });
      const out = path.join(tempDir(), 'out');
      const r = runCli(['generate', '-a', file, '--out', path.join(out, 'doc.md'), '--code-dir', path.join(out, 'code'), '--date', DATE]);
      expect(r.code, JSON.stringify(rule)).toBe(2);
      expect(r.stderr).toContain(field);
      expect(existsSync(out)).toBe(false);
    }
  });

  it('another edge row moved to the middleware with only layer is converted the way the ceiling is: counted in Redis, gone from nginx', () => {
    const file = answersFile({ stack: nginx, traffic, rules: [{ id: 'anonymous-per-ip', layer: 'middleware' }] });
    const { files } = generatedFiles(file, DATE);
    const design = files.find((f) => f.path === 'middleware/design.ts')?.content ?? '';
    const at = design.indexOf('id: "anonymous-per-ip"');
    expect(at).toBeGreaterThan(0);
    const block = design.slice(at, design.indexOf('\n    },', at));
    expect(block).toContain('store: "redis"');
    expect(files.find((f) => f.path === 'gateway/nginx.conf')?.content ?? '').not.toMatch(/anonymous.per.ip/);
  });

  describe("hold their burst at the ceiling's own burst", () => {
    // a 5 req/s ceiling, burst 5; high burstiness (10 s of rate) and one client at 0.2 req/s raise
    // each share to 1 req/s, whose 10 s of rate would be a burst of 10: twice what the ceiling lets through at once
    const high = { typicalRps: 1, peakRps: 3, burstiness: 'high', clientPeakRps: 0.2 };
    const ceiling = [{ id: 'global-ceiling', rate: { requests: 5, per: 'second' } }];
    const held =
      "burst 5 = the ceiling's own burst, not 10 s of rate (10): a share cannot let through more at once than the ceiling it is a share of";
    const stack = (gateway: string) => ({ language: 'TypeScript', framework: 'express', topology: 'single', gateway, store: 'redis' });

    it('per address and per webhook sender, in the middleware', () => {
      const { doc, files } = generatedFiles(answersFile({ traffic: high, rules: ceiling }), DATE);
      for (const id of ['anonymous-per-ip', 'webhooks-per-source']) {
        expect(shippedBurst(files, id), id).toBe(5);
        expect(matrixRate(doc, id), id).toMatch(/, burst 5$/);
      }
      expect(doc).toContain(`at; ${held}`);
    });

    it('per client (API key), in the middleware and in an AWS usage plan', () => {
      const keyed = {
        identities: ['api-key'],
        endpoints: [{ name: 'feed', method: 'GET', route: '/api/feed', class: 'read' }],
        traffic: { ...high, distinctClients: 100 },
      };
      const { doc, files } = generatedFiles(answersFile({ ...keyed, rules: ceiling }), DATE);
      expect(shippedBurst(files, 'fairness-per-api-key')).toBe(5);
      expect(doc).toContain(
        `- \`fairness-per-api-key\`: 1 req/s = a tenth of the ceiling (5 req/s, set by hand in its rules entry), raised to 1 req/s; ${held}`,
      );
      expect(doc).toContain("The bucket holds 5 tokens, the ceiling's own burst: 10 s of rate would be 10");

      // the same row moved to the edge by its rules entry: the usage plan's throttle carries the held burst
      const aws = generatedFiles(
        answersFile({
          ...keyed,
          stack: stack('aws-api-gateway'),
          rules: [...ceiling, { id: 'fairness-per-api-key', layer: 'edge', primitive: 'gateway-native' }],
        }),
        DATE,
      );
      const plan = aws.files.find((f) => f.path === 'gateway/aws-api-gateway.json')?.content ?? '';
      const limits = [...plan.matchAll(/"RateLimit": 1,\s*"BurstLimit": (\d+)/g)].map((m) => Number(m[1]));
      expect(limits.length).toBeGreaterThan(0);
      for (const b of limits) expect(b).toBe(5);
    });

    it('per address at the edge (nginx limit_req burst=)', () => {
      const { doc, files } = generatedFiles(answersFile({ stack: stack('nginx'), traffic: high, rules: ceiling }), DATE);
      const server = files.find((f) => f.path === 'gateway/nginx-server.conf')?.content ?? '';
      expect(server).toContain('limit_req zone=rl_global_ceiling burst=5 nodelay;');
      expect(server).toContain('limit_req zone=rl_anonymous_per_ip burst=5 nodelay;');
      expect(matrixRate(doc, 'anonymous-per-ip')).toBe('1 / 1 s, burst 5');
      expect(doc).toContain(held);
    });
  });
});
