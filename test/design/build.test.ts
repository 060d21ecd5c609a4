import { describe, expect, it } from 'vitest';
import { Answers } from '../../src/answers/schema.js';
import { buildDesign, ceilingOf } from '../../src/design/build.js';
import type { MatrixRule } from '../../src/design/model.js';
import { identityHashBytes, keyNameExtraBytes } from '../../src/design/matrix.js';
import { storeBound } from '../../src/design/monitoring.js';
import { DATE, exampleAnswers, exampleDesign, exampleNames } from '../helpers/examples.js';

const build = (a: unknown) => buildDesign(Answers.parse(a), { date: DATE });
const rule = (rules: MatrixRule[], id: string) => {
  const r = rules.find((x) => x.id === id);
  if (!r) throw new Error(`no rule ${id} in ${rules.map((x) => x.id).join(', ')}`);
  return r;
};

describe('design builder', () => {
  it.each(exampleNames())('%s: every rule names algorithm, key, rate, burst, cost, fail mode, layer, TTL and cardinality', (name) => {
    const d = exampleDesign(name);
    expect(d.rules.length).toBeGreaterThan(1);
    for (const r of d.rules) {
      expect(r.algorithm, r.id).toBeDefined();
      expect(r.key, r.id).toBeTruthy();
      expect(r.rate?.requests, r.id).toBeGreaterThan(0);
      expect(r.burst === null || (typeof r.burst === 'number' && r.burst > 0), r.id).toBe(true);
      expect(r.cost?.default, r.id).toBeGreaterThanOrEqual(1);
      expect(['open', 'closed']).toContain(r.failMode);
      expect(r.layer, r.id).toBeDefined();
      expect(r.ttlSeconds, r.id).toBeGreaterThan(0);
      expect(r.cardinality?.bound, r.id).toBeGreaterThan(0);
      expect(r.killSwitch?.flag, r.id).toMatch(/^ratelimit\..+\.mode$/);
    }
  });

  it('is deterministic: same answers and date give deep-equal designs', () => {
    for (const name of exampleNames()) {
      expect(JSON.stringify(exampleDesign(name))).toBe(JSON.stringify(exampleDesign(name)));
    }
  });

  describe('SaaS example (gateway, plans, outbound, horizontal)', () => {
    const d = exampleDesign('saas-platform');

    it('layers a ceiling, per-plan fairness and plan quotas without merging them', () => {
      const ceiling = rule(d.rules, 'global-ceiling');
      expect(ceiling.tier).toBe('ceiling');
      // peak 2,400 req/s x 2 headroom (high burstiness)
      expect(ceiling.rate).toEqual({ requests: 4800, periodSeconds: 1 });
      expect(ceiling.layer).toBe('edge');
      expect(ceiling.primitive).toBe('gateway-native');
      expect(rule(d.rules, 'fairness-pro').rate).toEqual({ requests: 600, periodSeconds: 60 });
      expect(rule(d.rules, 'fairness-pro').burst).toBe(200);
      expect(rule(d.rules, 'fairness-pro').identity).toBe('tenant');
      const quota = rule(d.rules, 'quota-free');
      expect(quota.tier).toBe('quota');
      expect(quota.algorithm).toBe('fixed-window');
      expect(quota.errorCode).toBe('QUOTA_EXCEEDED');
      expect(quota.rate?.requests).toBe(10000);
      // soft overage stops at 120%, pay-per-overage has a 3x guard
      expect(rule(d.rules, 'quota-pro').rate?.requests).toBe(1_200_000);
      expect(rule(d.rules, 'quota-enterprise').rate?.requests).toBe(60_000_000);
    });

    it('charges expensive classes extra tokens against the shared bucket, and sizes burst to fit the costliest call', () => {
      const free = rule(d.rules, 'fairness-free');
      const costs = Object.fromEntries(free.cost?.byEndpoint.map((c) => [c.endpoint, c.cost]) ?? []);
      expect(costs).toMatchObject({ 'search-orders': 5, 'sales-report': 10, 'export-orders': 25, 'create-order': 2 });
      expect(free.burst).toBeGreaterThanOrEqual(25);
      expect(d.rules.filter((r) => r.endpoints.includes('export-orders') && r.tier === 'fairness')).toHaveLength(3);
    });

    it('gives each auth flow a per-identity and a per-IP sliding-window-log row, fail closed and silent', () => {
      for (const kind of ['login', 'password-reset', 'token']) {
        const user = rule(d.rules, `auth-${kind}-per-identity`);
        const ip = rule(d.rules, `auth-${kind}-per-ip`);
        for (const r of [user, ip]) {
          expect(r.algorithm).toBe('sliding-window-log');
          expect(r.failMode).toBe('closed');
          expect(r.headers).toBe('silent');
          expect(r.burst).toBeNull();
        }
        expect(user.identity).toBe('username');
        expect(ip.identity).toBe('ip');
        // both keys share the flow's hash tag: one cluster slot, one atomic script call
        expect(user.key?.split('}')[0]).toBe(ip.key?.split('}')[0]);
      }
      expect(d.contract.silentRuleIds).toContain('auth-login-per-ip');
    });

    it('keys anonymous traffic on the trusted client IP, at the edge, with the NAT caveat', () => {
      const anon = rule(d.rules, 'anonymous-per-ip');
      expect(anon.identity).toBe('ip');
      expect(anon.layer).toBe('edge');
      expect(anon.rationale).toMatch(/NAT/);
      expect(anon.endpoints).toEqual(['public-catalog']);
      expect(d.enforcement.clientIp.source).toBe('x-forwarded-for');
      expect(d.enforcement.clientIp.trustedProxies).toEqual(['10.20.0.0/16']);
    });

    it('states cardinality bounds from the traffic numbers and a memory estimate', () => {
      expect(rule(d.rules, 'fairness-pro').cardinality?.bound).toBe(1200); // tenants
      expect(rule(d.rules, 'quota-pro').cardinality?.bound).toBe(1200); // one field per tenant in its hash (a new window overwrites)
      // attacker-controlled keys: admitted traffic x TTL; stack.gatewayNodes 2, so each nginx node
      // ships 2,400 req/s and the fleet admits the ceiling, 4,800
      expect(rule(d.rules, 'auth-login-per-identity').cardinality?.bound).toBe(4800 * 900);
      expect(rule(d.rules, 'auth-login-per-identity').cardinality?.byTraffic).toBe(true);
      expect(rule(d.rules, 'fairness-pro').cardinality?.byTraffic).toBeUndefined();
      // The rules bounded by the ceiling share it: all 4,800 req/s the 2 nodes admit on
      // password-reset (two rules of 1 h each) is the worst case, not the rows added up.
      const shared = d.monitoring.store.sharedCeiling;
      expect(shared?.keys).toBe(2 * 4800 * 3600);
      // sliding-log keys (182 B measured with 15-character names) plus their real names:
      // rl:{auth:password-reset}:un:<64 hex> is 92 characters (+64 B), :ip:<IPv6 /64> 52 (+32 B)
      expect(rule(d.rules, 'auth-password-reset-per-identity').keyChars).toBe(92);
      expect(rule(d.rules, 'auth-password-reset-per-identity').bytesPerKey).toBe(182 + 64);
      expect(rule(d.rules, 'auth-password-reset-per-ip').keyChars).toBe(52);
      expect(rule(d.rules, 'auth-password-reset-per-ip').bytesPerKey).toBe(182 + 32);
      // and the penalty box's keys share that traffic: a request the per-IP row refuses writes no
      // key of it and one refusal counter (261 B, 900 s) at most, beside the per-address key
      // (246 B): 507 B where the counter lives, against the 460 B of an admitted request
      expect(d.monitoring.store.penalty?.rows.map((r) => r.bytesPerKey)).toEqual([261, 261]);
      expect(shared?.penalty).toBe(true);
      expect(shared?.endpoint).toBeUndefined();
      expect(shared?.bytes).toBe(4800 * 900 * (246 + 261) + 4800 * 2700 * (246 + 214));
      expect(shared?.rules).toEqual(d.rules.filter((r) => r.cardinality?.byTraffic && r.layer !== 'edge').map((r) => r.id));
      expect(shared?.rowKeys).toBe(
        2 * 4800 * (900 + 3600 + 60) + rule(d.rules, 'webhooks-per-source').cardinality!.bound! + d.monitoring.store.penalty!.keys,
      );
      const byPopulation = d.rules.filter((r) => r.layer !== 'edge' && !r.cardinality?.byTraffic);
      // and the penalty box's counters and boxes (ceiling x 900 s, ceiling x 1,800 s / 5)
      expect(d.monitoring.store.penalty?.keys).toBe(4800 * 900 + (4800 * 1800) / 5);
      // (the rules kept in one hash per tenant hold one key per tenant between them)
      const own = byPopulation.filter((r) => !r.field);
      const hashes = new Set(byPopulation.filter((r) => r.field).map((r) => r.key));
      expect([...hashes]).toEqual(['rl:{t:<tenant-id>}']);
      expect(d.monitoring.store.estimatedKeys).toBe(own.reduce((n, r) => n + (r.cardinality?.bound ?? 0), 0) + 1200 + shared!.keys);
      // the tenant's hash once per tenant (1,200), with every field it can hold (its plan's, and an
      // earlier plan's until it expires): not once per plan row, which counted every tenant thrice
      const hashBytes = identityHashBytes(['req:free', 'req:pro', 'req:enterprise', 'quota']) + keyNameExtraBytes(138);
      for (const id of ['fairness-free', 'fairness-enterprise', 'quota-pro']) expect(rule(d.rules, id).bytesPerKey).toBe(hashBytes);
      expect(d.monitoring.store.hashes).toMatchObject([{ key: 'rl:{t:<tenant-id>}', keys: 1200, keyChars: 138, bytesPerKey: hashBytes }]);
      expect(d.monitoring.store.estimatedBytes).toBe(
        own.reduce((n, r) => n + (r.cardinality?.bound ?? 0) * (r.bytesPerKey ?? 0), 0) + 1200 * hashBytes + shared!.bytes,
      );
      expect(d.monitoring.store.maxmemoryPolicy).toBe('noeviction');
    });

    it('owns each rule at one layer, draws the placement diagram, and states the hybrid over-admission', () => {
      expect(d.enforcement.doubleCounted).toEqual([]);
      const owned = d.enforcement.layers.flatMap((l) => l.ruleIds);
      expect(owned.sort()).toEqual(d.rules.map((r) => r.id).sort());
      expect(d.enforcement.placementDiagram?.nodes.map((n) => n.id)).toEqual(expect.arrayContaining(['client', 'edge', 'mw', 'store']));
      expect(d.enforcement.hybrid).toMatchObject({ instances: 6 });
      expect(d.enforcement.hybrid?.overAdmission).toBe(6 * (d.enforcement.hybrid?.localBurst ?? 0));
      expect(d.enforcement.hybrid?.explanation).toContain(`${d.enforcement.hybrid?.overAdmission} extra requests`);
      // the bound holds under contention, and the document says what happens then (test/middleware/local-bucket.test.ts measures it)
      expect(d.enforcement.hybrid?.explanation).toContain('within any stretch of time the fleet admits at most');
      expect(d.enforcement.hybrid?.explanation).toContain('a local charge Redis refuses is never dropped: it stays owed');
    });

    it('limits outbound calls with a shared bucket at the safety fraction, fail closed, with a circuit', () => {
      const stripe = rule(d.rules, 'outbound-stripe');
      expect(stripe.rate).toEqual({ requests: 90, periodSeconds: 1 });
      expect(stripe.primitive).toBe('redis-lua');
      expect(stripe.key).toBe('rl:{out:stripe}:bucket');
      expect(rule(d.rules, 'outbound-sendgrid').rate).toEqual({ requests: 480, periodSeconds: 60 });
      expect(d.outbound?.circuit.failureThreshold).toBeGreaterThan(0);
      expect(d.outbound?.on429.join(' ')).toMatch(/Retry-After/);
    });

    it('uses the current IETF header fields and names the draft', () => {
      expect(d.contract.convention).toBe('ietf-structured');
      expect(d.contract.headers.map((h) => h.name)).toEqual(['RateLimit-Policy', 'RateLimit']);
      expect(d.contract.specReference).toMatch(/draft-ietf-httpapi-ratelimit-headers-1\d/);
      expect(d.contract.retryAfter.onEvery429).toBe(true);
      expect(d.contract.quotaExceededBody?.code).toBe('QUOTA_EXCEEDED');
    });

    it('rolls out in shadow first, security before general before quotas, with a kill switch per rule', () => {
      expect(d.rollout.steps[0]?.title).toMatch(/Shadow/);
      const order = d.rollout.steps.map((s) => s.title);
      expect(order.indexOf('Enforce abuse-sensitive limits')).toBeLessThan(order.indexOf('Enforce general limits'));
      expect(order.indexOf('Enforce general limits')).toBeLessThan(order.indexOf('Enforce quotas'));
      expect(d.rollout.killSwitches.map((k) => k.ruleId).sort()).toEqual(d.rules.map((r) => r.id).sort());
      expect(d.rollout.shadowDays).toBe(14);
    });

    it('ties all six scenarios to real rules', () => {
      expect(d.scenarios.map((s) => s.id)).toEqual([
        'burst-at-boundary',
        'concurrent-race',
        'store-outage',
        'throttled-recovery',
        'dual-key-auth',
        'cost-weighted-exhaustion',
      ]);
      const ids = new Set(d.rules.map((r) => r.id));
      for (const s of d.scenarios) {
        expect(s.applicable, s.id).toBe(true);
        for (const id of s.ruleIds) expect(ids.has(id), `${s.id} -> ${id}`).toBe(true);
      }
      expect(d.scenarios.find((s) => s.id === 'store-outage')?.ruleIds).toHaveLength(2);
    });
  });

  describe('generic design (partial context)', () => {
    const d = exampleDesign('minimal-generic');
    it('uses a token bucket per API key in middleware with Redis, and lists every assumption', () => {
      expect(d.meta.generic).toBe(true);
      const fair = d.rules.find((r) => r.tier === 'fairness');
      expect(fair).toMatchObject({ identity: 'api-key', layer: 'middleware', primitive: 'redis-lua', algorithm: 'gcra' });
      const ids = d.assumptions.map((a) => a.id);
      expect(ids).toEqual(
        expect.arrayContaining([
          'generic',
          'goals',
          'stack.store',
          'identities',
          'traffic.peakRps',
          'failure.byClass',
          'headers.convention',
        ]),
      );
      expect(d.enforcement.placementDiagram).toBeUndefined();
    });
  });

  it('derives the ceiling from measured capacity when given', () => {
    expect(ceilingOf({ capacityRps: 900, peakRps: 2000, headroom: 1.5 })).toBe(900);
    expect(ceilingOf({ peakRps: 101, headroom: 1.5 })).toBe(152);
  });

  it('adds a Redis when several instances have no shared store, and says so', () => {
    const d = build({ goals: ['fairness'], stack: { topology: 'horizontal', instances: 4, store: 'none' } });
    expect(d.scope.store).toBe('redis');
    expect(d.assumptions.find((a) => a.id === 'stack.store')?.text).toMatch(/N times/);
    expect(d.rules.every((r) => r.primitive !== 'in-process')).toBe(true);
  });

  it('keeps an in-process limiter for a single instance without a store', () => {
    const d = build({ goals: ['overload'], stack: { topology: 'single', store: 'none' } });
    expect(d.rules.every((r) => r.primitive === 'in-process')).toBe(true);
  });

  it("says a fail-closed rule's local bucket spends its credit before a store outage refuses", () => {
    const answers = (byClass: Record<string, string>) => ({
      goals: ['overload', 'abuse'],
      stack: { topology: 'horizontal', instances: 6, gateway: 'none', store: 'redis', trustedProxies: ['10.0.0.0/8'] },
      identities: ['ip'],
      endpoints: [{ name: 'geocode', method: 'GET', route: '/v1/geocode', class: 'read', anonymous: true }],
      traffic: { typicalRps: 900, peakRps: 4000, burstiness: 'high', clientPeakRps: 5, clientsPerAddress: 20 },
      failure: { byClass },
    });
    const closed = build(answers({ read: 'closed' })).enforcement.hybrid;
    expect(closed?.ruleIds).toEqual(['anonymous-per-ip']);
    expect(closed?.explanation).toContain(
      `A store outage meets the fail-closed rule here (anonymous-per-ip) one step late: an instance still admits what local credit it holds, at most ${closed?.localBurst} requests per identity`,
    );
    expect(build(answers({ read: 'open' })).enforcement.hybrid?.explanation).not.toContain('one step late');
  });

  it('explains in-process rules without Redis keys, expiries or script calls', () => {
    const d = build({
      goals: ['overload', 'abuse', 'fairness'],
      stack: { topology: 'single', store: 'none' },
      identities: ['user', 'ip'],
      endpoints: [
        { name: 'login', method: 'POST', route: '/login', class: 'auth', authKind: 'login', anonymous: true },
        { name: 'items', method: 'GET', route: '/items', class: 'read' },
      ],
    });
    const ceiling = d.rules.find((r) => r.tier === 'ceiling');
    expect(ceiling?.rationale).toMatch(/one bucket in the process/);
    const text = JSON.stringify([d.algorithms, d.enforcement.dualKeyAuth, ceiling?.rationale]);
    expect(d.algorithms.map((a) => a.limitClass)).toEqual(expect.arrayContaining(['ceiling', 'fairness', 'security']));
    expect(d.enforcement.dualKeyAuth).toMatch(/one step in the process/);
    expect(text).not.toMatch(/Redis|hash tag|script call|sorted-set|expiry of one small key|deployment-wide key|bytes per key/);
    // a store-backed design keeps the store's reasons
    const stored = build({ goals: ['fairness'], stack: { topology: 'single', store: 'redis' } });
    expect(stored.algorithms.find((a) => a.limitClass === 'fairness')?.tradeoff).toMatch(/Redis's millisecond expiry clock/);
  });

  it('applies hand-written rules: override, remove and add', () => {
    const a = exampleAnswers('consumer-auth');
    const d = buildDesign(
      {
        ...a,
        rules: [
          { id: 'auth-login-per-ip', remove: true },
          { id: 'fairness-per-user', rate: { requests: 7, per: 'second' } },
          { id: 'custom-search', endpointClass: 'search', algorithm: 'gcra' },
        ],
      },
      { date: DATE },
    );
    expect(d.rules.find((r) => r.id === 'auth-login-per-ip')).toBeUndefined();
    expect(rule(d.rules, 'fairness-per-user')).toMatchObject({ source: 'overridden', rate: { requests: 7, periodSeconds: 1 } });
    const custom = rule(d.rules, 'custom-search');
    expect(custom.source).toBe('hand-written');
    expect(custom.failMode).toBeUndefined();
    expect(custom.ttlSeconds).toBeUndefined();
  });

  it("prices a hand-written rule's keys by the script that runs it, so the memory bound counts them", () => {
    const a = exampleAnswers('consumer-auth');
    const d = buildDesign(
      {
        ...a,
        rules: [
          {
            id: 'custom-search',
            endpointClass: 'search',
            identity: 'user',
            algorithm: 'sliding-window-counter',
            primitive: 'redis-lua',
            layer: 'middleware',
            key: 'rl:{u:<user>}:search',
            rate: { requests: 30, per: 'minute' },
            cardinalityBound: 200000,
          },
          {
            id: 'custom-log',
            endpointClass: 'search',
            identity: 'user',
            algorithm: 'sliding-window-log',
            primitive: 'redis-lua',
            layer: 'middleware',
            key: 'rl:{u:<user>}:log',
            rate: { requests: 30, per: 'minute' },
            cardinalityBound: 1000,
          },
          { id: 'custom-edge', endpointClass: 'search', identity: 'ip', algorithm: 'fixed-window', layer: 'edge', key: 'edge' },
        ],
      },
      { date: DATE },
    );
    const without = buildDesign({ ...a, rules: [] }, { date: DATE });
    // a sliding window counter runs as a GCRA key; a log as a log; an edge rule is not in the store
    expect(rule(d.rules, 'custom-search').bytesPerKey).toBeGreaterThanOrEqual(117);
    expect(rule(d.rules, 'custom-log').bytesPerKey).toBeGreaterThanOrEqual(181);
    expect(rule(d.rules, 'custom-edge').bytesPerKey).toBeUndefined();
    const extra = d.monitoring.store.estimatedBytes - without.monitoring.store.estimatedBytes;
    expect(extra).toBeGreaterThanOrEqual(200000 * 117 + 1000 * 181);
  });

  it('keeps ids unique when names slug alike', () => {
    const d = build({
      goals: ['quotas'],
      stack: { topology: 'single' },
      plans: [
        { name: 'Pro', rate: { requests: 10, per: 'second' } },
        { name: 'pro!', rate: { requests: 20, per: 'second' } },
      ],
    });
    expect(d.rules.filter((r) => r.tier === 'fairness').map((r) => r.id)).toEqual(['fairness-pro', 'fairness-pro-2']);
  });
});

describe('storeBound: rules bounded by the ceiling share it', () => {
  const base = {
    source: 'generated',
    tier: 'security',
    title: 't',
    endpointClass: 'auth',
    routes: [],
    headers: 'silent',
    errorCode: 'RATE_LIMITED',
    layer: 'middleware',
  } as const;
  const r = (id: string, endpoints: string[], bound: number, bytesPerKey: number, byTraffic?: true) =>
    ({
      ...base,
      id,
      endpoints,
      bytesPerKey,
      cardinality: { bound, basis: 'b', ...(byTraffic ? { byTraffic } : {}) },
    }) as unknown as MatrixRule;

  it('counts the worst mix of endpoints once, and population-bounded rules in full', () => {
    const rules = [
      r('a', ['login'], 100, 10, true),
      r('b', ['login'], 100, 10, true),
      r('c', ['reset'], 300, 1, true),
      r('d', ['x'], 7, 2),
    ];
    // login alone: 200 keys, 2,000 bytes; reset alone: 300 keys, 300 bytes. But the requests of the
    // last 100 s on login (two keys each) and those of the 200 s before on reset (one key each, still
    // live) leave 400 keys, 2,200 bytes: more than either endpoint alone
    expect(storeBound(rules)).toEqual({
      keys: 400 + 7,
      bytes: 2200 + 14,
      shared: { rules: ['a', 'b', 'c'], rowKeys: 500, keys: 400, bytes: 2200 },
    });
  });

  it("shares the ceiling's traffic with the penalty box: a refusal writes nothing in the rule that refused, one penalty key at most", () => {
    // ceiling 10 req/s; the box follows a and b (both on login, 100 s and 50 s lifetimes); a
    // counter lives 20 s, a box 30 s and takes 3 refusals (so each refusal holds a third of a box
    // for up to 50 s)
    const penalty = {
      ruleIds: ['a', 'b'],
      refusals: 3,
      withinSeconds: 20,
      blockSeconds: 30,
      ceilingRps: 10,
      strikeBytes: 4,
      boxBytes: 6,
      keys: 200 + 100,
      bytes: 200 * 4 + 100 * 6,
    };
    const rules = [r('a', ['login'], 1000, 1, true), r('b', ['login'], 500, 1, true)];
    // keys: admitted, 2 for 500 requests, 1 for the next 500 (1,500); refused by b, a's key and a
    // counter (2 for 200, then 1), or a's key and a third of a box: never more. Rows added up: 1,800.
    // bytes: refused by b, a's key (1 B) and a counter (4 B) for 200 requests, a's key and a third of
    // a box (2 B) for the next 300, then a's key: 1,000 + 900 + 500, not the rows' 2,900
    expect(storeBound(rules, penalty)).toMatchObject({
      keys: 1500,
      bytes: 2400,
      shared: { keys: 1500, bytes: 2400, rowKeys: 1800, penalty: true },
    });
    // a box follows no rule on another endpoint: those requests add no penalty key
    const elsewhere = { ...penalty, ruleIds: ['z'] };
    expect(storeBound(rules, elsewhere)).toMatchObject({ keys: 1500, bytes: 1500 });
  });

  it("rules on one key pattern (the plans' quotas on one key) keep one key per identity: counted once, at the largest row", () => {
    const quota = (id: string, bound: number) =>
      ({ ...r(id, [], bound, 512), key: 'rl:{u:<user-id>}:quota:rolling', primitive: 'redis-lua' }) as MatrixRule;
    const own = { ...r('d', ['x'], 7, 2), key: 'rl:{u:<user-id>}:d' } as MatrixRule;
    // (each counted every user: 2 x 200,000 keys, where one key per user exists)
    expect(storeBound([quota('quota-basic', 200_000), quota('quota-plus', 200_000), own])).toEqual({
      keys: 200_000 + 7,
      bytes: 200_000 * 512 + 14,
      sameKey: [{ ruleId: 'quota-plus', keptWith: 'quota-basic' }],
    });
    expect(storeBound([quota('quota-basic', 100), quota('quota-plus', 300)]).sameKey).toEqual([
      { ruleId: 'quota-basic', keptWith: 'quota-plus' },
    ]);
  });

  it('a rule naming no endpoint counts on every endpoint; one ceiling rule or no saving: plain sums', () => {
    expect(storeBound([r('a', [], 50, 1, true), r('b', ['login'], 100, 1, true), r('c', ['reset'], 10, 1, true)]).shared).toMatchObject({
      keys: 150,
      endpoint: 'login',
    });
    expect(storeBound([r('a', ['login'], 100, 2, true), r('d', ['x'], 7, 2)])).toEqual({ keys: 107, bytes: 214 });
    // two rules on the same endpoint: the worst endpoint holds them all, nothing saved
    expect(storeBound([r('a', ['login'], 100, 2, true), r('b', ['login'], 10, 2, true)])).toEqual({ keys: 110, bytes: 220 });
    // edge rules keep no keys in the store
    expect(storeBound([{ ...r('e', ['login'], 100, 2, true), layer: 'edge' } as MatrixRule])).toEqual({ keys: 0, bytes: 0 });
  });
});
