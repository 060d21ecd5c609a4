/**
 * A rules entry that would silently do nothing, or count two callers in one Redis key, is bad
 * input: handRuleProblems names its JSON path and what is allowed (the commands then exit 2).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAnswers } from '../../src/answers/load.js';
import type { Answers } from '../../src/answers/schema.js';
import { buildDesign } from '../../src/design/build.js';
import { handRuleProblems } from '../../src/design/hand-rule-checks.js';
import { ROOT, exampleAnswers } from '../helpers/examples.js';

const DATE = '2026-12-03';

function problems(answers: Answers): string[] {
  return handRuleProblems(answers, buildDesign(answers, { date: DATE }));
}

const keyless = (): Answers =>
  parseAnswers(readFileSync(path.join(ROOT, 'test/fixtures/edge-cost/keyless-nginx.answers.json'), 'utf8'), 'keyless-nginx.answers.json');

describe('a rules entry naming a rule the design derives by cost at the edge', () => {
  it('is refused, naming the id, the rule it follows and the ids an entry can change', () => {
    // anonymous-per-ip at nginx: trip-plan (cost 10) counts in anonymous-per-ip-cost-10
    const base = keyless();
    expect(buildDesign(base, { date: DATE }).rules.map((r) => r.id)).toContain('anonymous-per-ip-cost-10');
    const out = problems({ ...base, rules: [{ id: 'anonymous-per-ip-cost-10', rate: { requests: 2, per: 'second' } }] });
    expect(out).toHaveLength(1);
    expect(out[0]).toContain('$.rules[0].id: "anonymous-per-ip-cost-10" is a rule the design derives from anonymous-per-ip');
    expect(out[0]).toContain('cannot be changed on its own');
    expect(out[0]).toMatch(/ids a rules entry can override or remove: global-ceiling, anonymous-per-ip$/);
    expect(out[0]).not.toMatch(/remove: .*anonymous-per-ip-cost-10/);
  });

  it('is refused when it removes one, and when its cost is no longer one the design splits by (a stale id)', () => {
    const base = keyless();
    const removed = problems({ ...base, rules: [{ id: 'anonymous-per-ip-cost-2', remove: true }] });
    expect(removed[0]).toContain('"anonymous-per-ip-cost-2" is a rule the design derives from anonymous-per-ip');
    expect(removed[0]).toContain('cannot be removed on its own');
    const stale = problems({ ...base, rules: [{ id: 'anonymous-per-ip-cost-7', rate: { requests: 2, per: 'second' } }] });
    expect(stale[0]).toContain('"anonymous-per-ip-cost-7" is a rule the design derives from anonymous-per-ip');
  });

  it('accepts an entry for the rule it is derived from, and a new rule of another id', () => {
    const base = keyless();
    const parent = base.rules ?? [];
    expect(problems({ ...base, rules: [...parent, { id: 'anonymous-per-ip', rate: { requests: 40, per: 'second' } }] })).toEqual([]);
    expect(
      problems({ ...base, rules: [{ id: 'trip-plan-per-ip', endpoints: ['trip-plan'], rate: { requests: 1, per: 'second' } }] }),
    ).toEqual([]);
  });
});

describe('a rules entry removing what is not there', () => {
  it('is refused, naming the id and the ids there are', () => {
    const out = problems({ ...exampleAnswers('saas-platform'), rules: [{ id: 'auth-login-per-ipp', remove: true }] });
    expect(out).toHaveLength(1);
    expect(out[0]).toContain('$.rules[0].id: "auth-login-per-ipp" is removed, but the design generates no rule with this id');
    expect(out[0]).toContain('auth-login-per-ip,');
  });

  it('accepts removing a generated row', () => {
    expect(problems({ ...exampleAnswers('saas-platform'), rules: [{ id: 'auth-login-per-ip', remove: true }] })).toEqual([]);
  });
});

describe('hand-written keys that can be one Redis key', () => {
  const store = { algorithm: 'gcra', primitive: 'redis-lua', layer: 'middleware', failMode: 'open', ttlSeconds: 60, burst: 10 } as const;
  const withRules = (rules: NonNullable<Answers['rules']>): Answers => ({ ...exampleAnswers('saas-platform'), rules });

  it('refuses unlabelled slots of two identities: a user id and an API key id that are equal share the key', () => {
    const out = problems(
      withRules([
        {
          ...store,
          id: 'search-user',
          identity: 'user',
          endpoints: ['search-orders'],
          key: '{<user-id>}',
          rate: { requests: 5, per: 'second' },
        },
        {
          ...store,
          id: 'search-key',
          identity: 'api-key',
          endpoints: ['search-orders'],
          key: '{<api-key-id>}',
          rate: { requests: 5, per: 'second' },
        },
      ]),
    );
    expect(
      out.some((p) =>
        p.includes(
          '$.rules[1].key: "rl:{<api-key-id>}" (rule search-key, per api-key) and rules[0] (search-user)\'s "rl:{<user-id>}" (per user) can name the same Redis key',
        ),
      ),
    ).toBe(true);
    expect(out.join('\n')).toContain('both use rl:{42}');
    expect(out.join('\n')).toContain('The design does not relabel a key you wrote, so this is refused');
    expect(out.join('\n')).toContain('{u:<user-id>} for user');
  });

  it('refuses an unlabelled slot whose value can spell another identity\'s labelled key (a user id "t:42" is the tenant hash rl:{t:42})', () => {
    const out = problems(
      withRules([
        {
          ...store,
          id: 'search-user',
          identity: 'user',
          endpoints: ['search-orders'],
          key: '{<user-id>}',
          rate: { requests: 5, per: 'second' },
        },
      ]),
    );
    expect(out).toHaveLength(1);
    // the tenants' hash of the design's fairness and quota rows
    expect(out[0]).toContain(
      'search-user counting a user id "t:42" and fairness-free counting a tenant id "42" both use rl:{t:42}, so two different callers would share one counter',
    );
    expect(out[0]).toContain('(it can also meet the keys of fairness-pro, fairness-enterprise, quota-free, quota-pro, quota-enterprise)');
  });

  it("refuses a key that can be the penalty box's (rl:{pb:<caller>}:strikes), where the design has one", () => {
    const answers = withRules([
      {
        ...store,
        id: 'odd',
        identity: 'user',
        endpoints: ['search-orders'],
        key: 'rl:{<user-id>}:strikes',
        rate: { requests: 5, per: 'second' },
      },
    ]);
    expect(answers.access?.penalty).toBeDefined();
    const out = problems(answers);
    expect(out).toHaveLength(1);
    expect(out[0]).toMatch(/the penalty box's "rl:\{pb:<caller>\}:strikes"|also meet the keys of [^)]*penalty-box/);
    const { penalty: _, ...access } = answers.access ?? {};
    expect(problems({ ...answers, access })).toEqual([]);
  });

  it('accepts the same two rules with labelled slots', () => {
    expect(
      problems(
        withRules([
          {
            ...store,
            id: 'search-user',
            identity: 'user',
            endpoints: ['search-orders'],
            key: '{u:<user-id>}:search',
            rate: { requests: 5, per: 'second' },
          },
          {
            ...store,
            id: 'search-key',
            identity: 'api-key',
            endpoints: ['search-orders'],
            key: '{ak:<api-key-id>}:search',
            rate: { requests: 5, per: 'second' },
          },
        ]),
      ),
    ).toEqual([]);
  });

  it('refuses one identity and one key kept by two scripts, and accepts it kept by one', () => {
    const log = { ...store, algorithm: 'sliding-window-log' } as const;
    const out = problems(
      withRules([
        {
          ...store,
          id: 'a-user',
          identity: 'user',
          endpoints: ['search-orders'],
          key: '{u:<user-id>}:x',
          rate: { requests: 5, per: 'second' },
        },
        {
          ...log,
          id: 'b-user',
          identity: 'user',
          endpoints: ['export-orders'],
          key: '{u:<user-id>}:x',
          rate: { requests: 5, per: 'minute' },
        },
      ]),
    );
    expect(out).toHaveLength(1);
    expect(out[0]).toContain(
      '$.rules[1].key: "rl:{u:<user-id>}:x" (rule b-user) and rules[0] (a-user)\'s "rl:{u:<user-id>}:x" both count per user under one key, but with different state',
    );
    expect(out[0]).toContain('WRONGTYPE');
    expect(
      problems(
        withRules([
          {
            ...log,
            id: 'a-user',
            identity: 'user',
            endpoints: ['search-orders'],
            key: '{u:<user-id>}:x',
            rate: { requests: 5, per: 'minute' },
          },
          {
            ...log,
            id: 'b-user',
            identity: 'user',
            endpoints: ['export-orders'],
            key: '{u:<user-id>}:x',
            rate: { requests: 5, per: 'minute' },
          },
        ]),
      ),
    ).toEqual([]);
  });
});

describe('one identity and one key kept by one script with different numbers', () => {
  const log = { algorithm: 'sliding-window-log', primitive: 'redis-lua', layer: 'middleware', failMode: 'open', ttlSeconds: 3600 } as const;
  it('is refused: a 1-minute log would trim the entries the 1-hour log on the same key still needs', () => {
    const out = problems({
      ...exampleAnswers('saas-platform'),
      rules: [
        {
          ...log,
          id: 'per-minute',
          identity: 'user',
          endpoints: ['search-orders'],
          key: '{u:<user-id>}:y',
          rate: { requests: 5, per: 'minute' },
        },
        {
          ...log,
          id: 'per-hour',
          identity: 'user',
          endpoints: ['search-orders'],
          key: '{u:<user-id>}:y',
          rate: { requests: 100, per: 'hour' },
        },
      ],
    });
    expect(out).toHaveLength(1);
    expect(out[0]).toContain(
      '$.rules[1].key: "rl:{u:<user-id>}:y" (rule per-hour, 100 per 3600 s) and rules[0] (per-minute)\'s "rl:{u:<user-id>}:y" (5 per 60 s) both count per user in one sliding-window-log state with different numbers',
    );
  });
});

describe('the answers the project ships', () => {
  const files = [
    ...readdirSync(path.join(ROOT, 'examples'))
      .filter((f) => f.endsWith('.answers.json'))
      .map((f) => path.join(ROOT, 'examples', f)),
    ...readdirSync(path.join(ROOT, 'test/fixtures'), { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.answers.json'))
      .map((f) => path.join(ROOT, 'test/fixtures', f)),
  ];
  it.each(files.map((f) => [path.relative(ROOT, f), f]))('%s has no such problem', (_name, file) => {
    expect(problems(parseAnswers(readFileSync(file, 'utf8'), file))).toEqual([]);
  });
});

describe('a rules entry that moves a row to another layer', () => {
  const mixed = (): Answers =>
    parseAnswers(
      readFileSync(path.join(ROOT, 'test/fixtures/review/koa-existing-nginx-mixed.answers.json'), 'utf8'),
      'koa-existing-nginx-mixed.answers.json',
    );

  it('refuses the ceiling (or any row but an outbound one) in the outbound client, naming the field and what is allowed', () => {
    const out = problems({ ...mixed(), rules: [{ id: 'global-ceiling', layer: 'outbound-client' }] });
    expect(out).toEqual([
      '  $.rules[0].layer: "outbound-client" places global-ceiling in the outbound client, which counts the calls this API makes to a provider (the outbound rows, one per outbound entry); global-ceiling is a ceiling row that limits requests to this API, which the outbound client never sees, so nothing would enforce it. Allowed: "edge" or "middleware" (or no layer); a provider\'s limit goes in outbound',
    ]);
    const fairness = problems({ ...mixed(), rules: [{ id: 'anonymous-per-ip', layer: 'outbound-client' }] });
    expect(fairness[0]).toContain('$.rules[0].layer: "outbound-client" places anonymous-per-ip in the outbound client');
    // an outbound row stays where it is
    expect(problems({ ...mixed(), rules: [{ id: 'outbound-scanvault', layer: 'outbound-client' }] })).toEqual([]);
  });

  it('converts an edge row moved to the middleware with layer alone, as the ceiling is: the store primitive and key, said in its derivation', () => {
    const answers: Answers = { ...mixed(), rules: [{ id: 'anonymous-per-ip', layer: 'middleware' }] };
    expect(problems(answers)).toEqual([]);
    const d = buildDesign(answers, { date: DATE });
    const row = d.rules.find((r) => r.id === 'anonymous-per-ip');
    expect(row).toMatchObject({
      layer: 'middleware',
      primitive: 'redis-lua',
      key: 'rl:{ip:<client-ip>}:anonymous-per-ip',
      source: 'overridden',
    });
    expect(row?.derivation).toContain(
      "moved to the middleware by its rules entry (layer), so primitive redis-lua and key rl:{ip:<client-ip>}:anonymous-per-ip, the design's for a middleware row, in place of the gateway's",
    );
    // its key bound taken again over the middleware's TTL (a full refill: 375 / 75 per s = 5 s), not nginx's 60 s
    expect(row?.ttlSeconds).toBe(5);
    expect(row?.cardinality).toMatchObject({ bound: 9_000 });
    expect(row?.cardinality?.basis).toContain('each live key needs a request within its 5 s TTL, and the ceiling admits 1,800 req/s');
    // counted by the middleware now: no edge split by cost follows it
    expect(d.rules.some((r) => r.id.startsWith('anonymous-per-ip-cost-'))).toBe(false);
    // a key the entry names is kept
    const keyed = buildDesign(
      { ...mixed(), rules: [{ id: 'anonymous-per-ip', layer: 'middleware', key: '{ip:<client-ip>}:anon' }] },
      { date: DATE },
    );
    expect(keyed.rules.find((r) => r.id === 'anonymous-per-ip')).toMatchObject({ primitive: 'redis-lua', key: 'rl:{ip:<client-ip>}:anon' });
  });

  it('still refuses an entry that keeps the gateway-native primitive in the middleware, naming primitive', () => {
    const out = problems({ ...mixed(), rules: [{ id: 'anonymous-per-ip', layer: 'middleware', primitive: 'gateway-native' }] });
    expect(out[0]).toContain('$.rules[0].primitive: anonymous-per-ip is counted in the middleware');
  });
});
