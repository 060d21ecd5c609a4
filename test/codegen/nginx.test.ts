/**
 * The generated nginx config: `nginx -t` accepts it for every example and for a design full
 * of hostile strings, and a real nginx running it refuses with 429 + Retry-After +
 * problem+json at the designed numbers, keys on the trusted client IP, keeps health probes
 * exempt, and refuses nothing in shadow mode.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAnswers } from '../../src/answers/load.js';
import { buildDesign } from '../../src/design/build.js';
import { edgeProblemBody, edgeRules } from '../../src/codegen/gateway/edge.js';
import { generateNginx, nginxEdgeRefusals, nginxRate, nginxZoneMb } from '../../src/codegen/gateway/nginx.js';
import type { Design } from '../../src/design/model.js';
import { exampleDesign, exampleNames } from '../helpers/examples.js';
import { HEALTH_ROUTE, META_ROUTE, TEMPLATE_DOCS_URL, hostileAnswers, hostileDesign } from './support/hostile.js';
import { burst, get, nginxPrefix, nginxTest, startNginx, useRunningNginx } from './support/nginx.js';

async function expectNginxAccepts(design: Design): Promise<void> {
  const prefix = await nginxPrefix(generateNginx(design));
  try {
    const result = await nginxTest(prefix);
    expect(result.output).toContain('syntax is ok');
    expect(result.ok, result.output).toBe(true);
  } finally {
    prefix.remove();
  }
}

describe('nginx -t accepts the generated config', () => {
  for (const name of exampleNames()) {
    it(`example ${name} (${exampleDesign(name).scope.gateway})`, async () => {
      await expectNginxAccepts(exampleDesign(name));
    });
  }

  it('the example with an nginx gateway has both edge rules in it', () => {
    const design = exampleDesign('saas-platform');
    expect(design.scope.gateway).toBe('nginx');
    const [http, server] = generateNginx(design);
    expect(http?.content).toContain('set_real_ip_from 10.20.0.0/16;');
    expect(http?.content).toContain('real_ip_header X-Forwarded-For;');
    expect(http?.content).toContain('real_ip_recursive on;');
    expect(http?.content).toContain('limit_req_status 429;');
    expect(http?.content).toMatch(/limit_req_zone \$rl_global_ceiling_key zone=rl_global_ceiling:1m rate=2400r\/s;/);
    // the addresses one of the 2 nodes can see: 144,000 live IPs x 128 B = 17.6 MB, rounded up
    expect(http?.content).toMatch(/limit_req_zone \$rl_anonymous_per_ip_key zone=rl_anonymous_per_ip:18m rate=50r\/s;/);
    expect(http?.content).toContain('"~*^(?:GET|HEAD) /v1/catalog/?$" $binary_remote_addr;');
    expect(http?.content).toContain('"~*^(?:GET|HEAD) /healthz/?$" "";');
    expect(server?.content).toContain('limit_req zone=rl_global_ceiling burst=2400 nodelay;');
    expect(server?.content).toContain('limit_req zone=rl_anonymous_per_ip burst=500 nodelay;');
    expect(server?.content).toContain('add_header Retry-After 1 always;');
    expect(server?.content).toContain('limit_req_dry_run on;');
    // stack.gatewayNodes 2: each node ships its share of the ceiling, and the comment says so
    expect(http?.content).toMatch(
      /the fleet's 4,800 per 1 s, burst 4,800 divided by the 2 nginx nodes \(stack\.gatewayNodes\), rounded down: 2,400 per 1 s, burst 2,400 here/,
    );
  });

  it('a hostile design (quotes, braces, $, #, */, ]], newlines in names, routes and URLs)', async () => {
    await expectNginxAccepts(hostileDesign());
  });

  it('no trusted proxies: no real-IP directives, the TCP peer is the key', async () => {
    const base = exampleDesign('saas-platform');
    const design: Design = {
      ...base,
      enforcement: { ...base.enforcement, clientIp: { ...base.enforcement.clientIp, trustedProxies: [] } },
    };
    const [http] = generateNginx(design);
    expect(http?.content).not.toContain('set_real_ip_from');
    expect(http?.content).not.toContain('real_ip_header');
    await expectNginxAccepts(design);
  });

  it('a trusted "proxy" that is not an address is left out as a comment', async () => {
    const base = exampleDesign('saas-platform');
    const bad = '10.0.0.0/8;\ninclude /etc/passwd';
    const design: Design = {
      ...base,
      enforcement: { ...base.enforcement, clientIp: { ...base.enforcement.clientIp, trustedProxies: [bad, '10.1.0.0/16'] } },
    };
    const [http] = generateNginx(design);
    expect(http?.content).not.toMatch(/^include \/etc\/passwd/m);
    expect(http?.content).toContain('set_real_ip_from 10.1.0.0/16;');
    await expectNginxAccepts(design);
  });
});

describe('nginx rates and zone sizes', () => {
  it('expresses rates in whole requests per second or minute', () => {
    expect(nginxRate({ requests: 5, periodSeconds: 1 })).toEqual({ text: '5r/s', exact: true });
    expect(nginxRate({ requests: 600, periodSeconds: 60 })).toEqual({ text: '10r/s', exact: true });
    expect(nginxRate({ requests: 30, periodSeconds: 60 })).toEqual({ text: '30r/m', exact: true });
    expect(nginxRate({ requests: 120, periodSeconds: 3600 })).toEqual({ text: '2r/m', exact: true });
    expect(nginxRate({ requests: 10, periodSeconds: 900 })).toEqual({ text: '1r/m', exact: false });
    expect(nginxRate({ requests: 2.5, periodSeconds: 1 })).toEqual({ text: '150r/m', exact: true });
  });

  it('sizes a zone at ~128 bytes per live state, rounded up to whole MB', () => {
    expect(nginxZoneMb(1)).toBe(1);
    expect(nginxZoneMb(8192)).toBe(1);
    expect(nginxZoneMb(8193)).toBe(2);
    expect(nginxZoneMb(288_000)).toBe(36);
    expect(nginxZoneMb(undefined)).toBe(10);
  });
});

/** Enforce: the generated file starts in shadow mode (rollout step 1). */
const enforce = (content: string): string => content.replace('limit_req_dry_run on;', 'limit_req_dry_run off;');

/** The hostile design with its ceiling raised out of the way, so each test sees one rule. */
function withoutCeiling(design: Design): Design {
  return {
    ...design,
    rules: design.rules.map((r) =>
      r.id === 'global-ceiling' ? { ...r, rate: { requests: 100_000, periodSeconds: 1 }, burst: 100_000 } : r,
    ),
  };
}

describe('a real nginx running the hostile design', () => {
  const design = withoutCeiling(hostileDesign());
  const rules = edgeRules(design);
  const anon = rules.find((r) => r.id === 'anonymous-per-ip');
  const running = useRunningNginx(generateNginx(design), enforce);

  it('admits the burst on a metacharacter route, then answers 429 with Retry-After and the problem body', async () => {
    expect(anon?.burst).toBe(50);
    const path = encodeURI(META_ROUTE);
    const started = Date.now();
    const replies = await burst(running.nginx.port, 130, path);
    const elapsed = Date.now() - started;
    const ok = replies.filter((r) => r.status === 200).length;
    const refused = replies.filter((r) => r.status === 429);
    // burst + 1 at once, plus what drains at 10 r/s while the requests arrive
    expect(ok).toBeGreaterThanOrEqual(51);
    expect(ok).toBeLessThanOrEqual(51 + Math.ceil((elapsed * 10) / 1000) + 1);
    expect(refused.length).toBe(130 - ok);
    const first = refused[0]!;
    expect(first.headers['retry-after']).toBe('1');
    expect(first.headers['content-type']).toBe('application/problem+json');
    // the body survives nginx byte for byte: $, quotes, braces in the documentation URL included
    expect(JSON.parse(first.body)).toEqual(edgeProblemBody(design, rules, 1));
  });

  it('matches the route exactly: "." is not a wildcard, other paths are not counted', async () => {
    const other = await burst(running.nginx.port, 20, encodeURI(META_ROUTE.replace('.', 'X')));
    expect(other.every((r) => r.status === 200)).toBe(true);
  });

  it('keys on the trusted client IP; a client-written X-Forwarded-For entry does not escape', async () => {
    const path = encodeURI(META_ROUTE);
    // 127.0.0.1 is a trusted proxy: the address it forwards is the client, with a bucket of its own
    const t0 = Date.now();
    const own = await burst(running.nginx.port, 130, path, { 'x-forwarded-for': '203.0.113.7' });
    const admitted = own.filter((r) => r.status === 200).length;
    expect(admitted).toBeGreaterThanOrEqual(51);
    expect(admitted).toBeLessThanOrEqual(51 + Math.ceil(((Date.now() - t0) * 10) / 1000) + 1);
    expect(own.filter((r) => r.status === 429).length).toBe(130 - admitted);
    // the client prepends a forged address: the rightmost untrusted entry is still the key
    const forged = await burst(running.nginx.port, 30, path, { 'x-forwarded-for': '198.51.100.9, 203.0.113.7' });
    // what refilled since the first burst began (the bucket may have emptied at any point of it,
    // and a loaded machine can stretch both bursts): still far from the 30 a fresh bucket admits
    const refilled = Math.ceil(((Date.now() - t0) * 10) / 1000) + 1;
    expect(forged.filter((r) => r.status === 200).length).toBeLessThanOrEqual(Math.min(refilled, 29));
    // the forged address on its own is a different client, with a full bucket
    const other = await burst(running.nginx.port, 30, path, { 'x-forwarded-for': '198.51.100.9' });
    expect(other.every((r) => r.status === 200)).toBe(true);
  });

  it('keys the hand-written edge rule on the API key header', async () => {
    const a = await burst(running.nginx.port, 40, '/v1/orders', { 'x-api-key': 'key-a' }, 'POST');
    const refusedA = a.filter((r) => r.status === 429).length;
    expect(refusedA).toBeGreaterThanOrEqual(15);
    const b = await get(running.nginx.port, '/v1/orders', { 'x-api-key': 'key-b' }, 'POST');
    expect(b.status).not.toBe(429);
  });
});

describe('a documentation URL with nginx syntax in it ($request_uri, quotes, ;, braces)', () => {
  const design = withoutCeiling(buildDesign(hostileAnswers({ headers: { docsUrl: TEMPLATE_DOCS_URL } }), { date: '2026-12-02' }));
  const rules = edgeRules(design);

  it('nginx -t accepts the config', async () => {
    expect(design.contract.docsUrl).toBe(TEMPLATE_DOCS_URL);
    await expectNginxAccepts(design);
    // the document says why the file's text differs from the body it shows
    expect(nginxEdgeRefusals(design)[0]!.notes).toContain(
      'nginx expands $ variables in the text it returns, so the file writes $ as \\u0024 (JSON escapes): a JSON parser reads the body shown here.',
    );
  });

  describe('a real nginx', () => {
    const running = useRunningNginx(generateNginx(design), enforce);

    it('answers 429 with the URL in the body exactly as the document states it, $request_uri not expanded', async () => {
      const path = encodeURI(META_ROUTE);
      const refused = (await burst(running.nginx.port, 130, path)).filter((r) => r.status === 429);
      expect(refused.length).toBeGreaterThan(0);
      const body = JSON.parse(refused[0]!.body);
      expect(body.documentation).toBe(TEMPLATE_DOCS_URL);
      expect(body.type).toBe(`${TEMPLATE_DOCS_URL}#rate-limited`);
      expect(body).toEqual(edgeProblemBody(design, rules, 1));
      expect(refused[0]!.body).not.toContain(path);
    });
  });
});

describe('the global ceiling at the edge', () => {
  it('refuses past its burst, and never counts the exempt health probe', async () => {
    const design = hostileDesign();
    const ceiling = edgeRules(design).find((r) => r.id === 'global-ceiling');
    expect(ceiling?.burst).toBe(150);
    expect(ceiling?.routes).toEqual([]);
    const prefix = await nginxPrefix(generateNginx(design), enforce);
    const nginx = await startNginx(prefix);
    try {
      // spread over many client addresses: only the one node-wide counter can refuse them
      const started = Date.now();
      const flood = await Promise.all(
        Array.from({ length: 400 }, (_, i) => get(nginx.port, '/v1/anything', { 'x-forwarded-for': `192.0.2.${i % 250}` })),
      );
      const admitted = flood.filter((r) => r.status === 200).length;
      expect(flood.filter((r) => r.status === 429).length).toBe(400 - admitted);
      expect(admitted).toBeGreaterThanOrEqual(151);
      expect(admitted).toBeLessThanOrEqual(151 + Math.ceil(((Date.now() - started) * 150) / 1000) + 1);
      expect(admitted).toBeLessThan(400);
      const health = await burst(nginx.port, 50, encodeURI(HEALTH_ROUTE));
      expect(health.map((r) => r.status)).toEqual(Array(50).fill(200));
    } finally {
      await nginx.stop();
      prefix.remove();
    }
  });
});

describe('shadow mode (as generated): nginx refuses nothing', () => {
  it('lets the whole burst through with limit_req_dry_run on', async () => {
    const design = hostileDesign();
    const prefix = await nginxPrefix(generateNginx(design));
    const nginx = await startNginx(prefix);
    try {
      const replies = await burst(nginx.port, 200, encodeURI(META_ROUTE));
      expect(replies.every((r) => r.status === 200)).toBe(true);
    } finally {
      await nginx.stop();
      prefix.remove();
    }
  });
});

describe('an endpoint that costs 10 units behind nginx', () => {
  // trip-plan costs 10: nginx counts requests, so it has a zone of its own at the per-IP rate / 10
  const design = buildDesign(
    parseAnswers(
      readFileSync(new URL('../fixtures/edge-cost/keyless-nginx.answers.json', import.meta.url), 'utf8'),
      'keyless-nginx.answers.json',
    ),
    { date: '2026-12-03' },
  );

  it('nginx -t accepts the config, and each zone holds the numbers the matrix states', async () => {
    await expectNginxAccepts(design);
    const [http, server] = generateNginx(design);
    const base = design.rules.find((r) => r.id === 'anonymous-per-ip')!;
    const costly = design.rules.find((r) => r.id === 'anonymous-per-ip-cost-10')!;
    expect(costly.endpoints).toEqual(['trip-plan']);
    expect(costly.rate).toEqual({ requests: Math.floor(base.rate!.requests / 10), periodSeconds: 1 });
    expect(costly.burst).toBe(Math.floor((base.burst as number) / 10));
    expect(http?.content).toContain(`zone=rl_anonymous_per_ip_cost_10:22m rate=${costly.rate!.requests}r/s;`);
    expect(http?.content).toContain(`zone=rl_anonymous_per_ip:22m rate=${base.rate!.requests}r/s;`);
    expect(server?.content).toContain(`limit_req zone=rl_anonymous_per_ip_cost_10 burst=${costly.burst} nodelay;`);
    // trip-plan is in the costly zone's map only
    const baseMap = http!.content.slice(
      http!.content.indexOf('$rl_anonymous_per_ip_key {'),
      http!.content.indexOf('limit_req_zone $rl_anonymous_per_ip_key'),
    );
    expect(baseMap).not.toContain('/v1/plan');
  });

  it('a real nginx passes one address at most 1 + burst / 10 plan calls at once, and the reads their own burst', async () => {
    const costly = design.rules.find((r) => r.id === 'anonymous-per-ip-cost-10')!;
    const prefix = await nginxPrefix(generateNginx(design), enforce);
    const nginx = await startNginx(prefix);
    try {
      const started = Date.now();
      // the static location answers a POST with 405: anything but 429 got past limit_req
      const plans = await burst(nginx.port, 120, '/v1/plan', {}, 'POST');
      const passed = plans.filter((r) => r.status !== 429).length;
      const refill = Math.ceil(((Date.now() - started) * costly.rate!.requests) / 1000);
      expect(passed).toBeGreaterThanOrEqual(1 + (costly.burst as number));
      expect(passed).toBeLessThanOrEqual(1 + (costly.burst as number) + refill);
      const reads = await burst(nginx.port, 120, '/v1/stops/42/departures');
      expect(reads.filter((r) => r.status === 429)).toEqual([]);
    } finally {
      await nginx.stop();
      prefix.remove();
    }
  });
});
