import boundedKeys from '../../src/constraints/bounded-keys.js';
import { getRule, mutate, validDesign } from '../fixtures/design.js';
import { access, edit, main, saas } from './broken-files.js';
import { runConstraintTests } from './tester.js';

const design = validDesign();

runConstraintTests(boundedKeys, {
  valid: [
    { name: 'the reference design', design },
    {
      name: 'a TTL of exactly one full refill (burst 100 at 50/s = 2 s)',
      design: mutate(design, (d) => {
        getRule(d, 'api-per-api-key').ttlSeconds = 2;
      }),
    },
    {
      name: 'a sliding window counter that keeps two windows',
      design: mutate(design, (d) => {
        const rule = getRule(d, 'auth-login-per-ip');
        rule.algorithm = 'sliding-window-counter';
        rule.ttlSeconds = 1800;
      }),
    },
    {
      name: "the outbound client's in-process bucket, with no TTL: one entry per provider, bounded by the providers",
      design: mutate(design, (d) => {
        const rule = getRule(d, 'outbound-payments');
        rule.primitive = 'in-process';
        delete rule.ttlSeconds;
      }),
    },
  ],
  invalid: [
    {
      name: "a TTL stated for the outbound client's in-process bucket, which the client never applies",
      design: mutate(design, (d) => {
        getRule(d, 'outbound-payments').primitive = 'in-process';
      }),
      expect: [{ messageId: 'ttlNeverApplied', ruleId: 'outbound-payments' }],
    },
    {
      name: 'an in-process outbound bucket without a TTL is still judged by its bound',
      design: mutate(design, (d) => {
        const rule = getRule(d, 'outbound-payments');
        rule.primitive = 'in-process';
        delete rule.ttlSeconds;
        delete rule.cardinality;
      }),
      expect: [{ messageId: 'unboundedCardinality', ruleId: 'outbound-payments' }],
    },
    {
      name: 'keys with no TTL, or a TTL of zero',
      design: mutate(design, (d) => {
        delete getRule(d, 'api-per-api-key').ttlSeconds;
        getRule(d, 'quota-free-monthly').ttlSeconds = 0;
      }),
      expect: [
        { messageId: 'missingTtl', ruleId: 'api-per-api-key' },
        { messageId: 'missingTtl', ruleId: 'quota-free-monthly' },
      ],
    },
    {
      name: 'a TTL shorter than the window it counts',
      design: mutate(design, (d) => {
        getRule(d, 'auth-login-per-ip').ttlSeconds = 600;
      }),
      expect: [{ messageId: 'ttlTooShort', ruleId: 'auth-login-per-ip', data: { ttl: 600, needed: 900 } }],
    },
    {
      name: "a sliding window counter that drops the previous window's count",
      design: mutate(design, (d) => {
        getRule(d, 'auth-login-per-ip').algorithm = 'sliding-window-counter';
      }),
      expect: [{ messageId: 'ttlTooShort', ruleId: 'auth-login-per-ip', data: { ttl: 900, needed: 1800 } }],
    },
    {
      name: 'a token bucket that expires before it refills',
      design: mutate(design, (d) => {
        const rule = getRule(d, 'api-per-api-key');
        rule.burst = 5_000;
        rule.ttlSeconds = 60;
      }),
      expect: [{ messageId: 'ttlTooShort', ruleId: 'api-per-api-key', data: { ttl: 60, needed: 100, algorithm: 'token-bucket' } }],
    },
    {
      name: 'no bound, an infinite bound, and a bound with no basis',
      design: mutate(design, (d) => {
        delete getRule(d, 'auth-login-per-username').cardinality;
        getRule(d, 'auth-login-per-ip').cardinality = { bound: Number.POSITIVE_INFINITY, basis: 'every IPv6 address' };
        getRule(d, 'api-per-api-key').cardinality = { bound: 10_000, basis: '' };
      }),
      expect: [
        { messageId: 'cardinalityNotStated', ruleId: 'api-per-api-key', data: { bound: 10_000 } },
        { messageId: 'unboundedCardinality', ruleId: 'auth-login-per-username' },
        { messageId: 'unboundedCardinality', ruleId: 'auth-login-per-ip' },
      ],
    },
    {
      name: 'a rule with no key pattern',
      design: mutate(design, (d) => {
        delete getRule(d, 'outbound-payments').key;
      }),
      expect: [{ messageId: 'missingKey', ruleId: 'outbound-payments' }],
    },
  ],
});

// What ships: the generated files checked against the design, and broken one at a time.
runConstraintTests(boundedKeys, {
  valid: [
    { name: 'the files generated for saas-platform', ...saas() },
    { name: 'the files of a design with a penalty box (lua/penalty.lua sets both lifetimes)', ...access() },
  ],
  invalid: [
    {
      name: 'a penalty script that shuts the box for ever',
      design: access().design,
      files: edit(access(), 'lua/penalty.lua', (c) => c.replace(/'PX'/g, "'XX'").replace(/'PEXPIRE'/g, "'PERSIST'")),
      expect: [{ messageId: 'luaWithoutTtl', data: { file: 'penalty.lua' } }],
    },
    {
      name: 'a penalty box without lifetimes',
      design: mutate(access().design, (d) => {
        const p = d.access?.penalty;
        if (p) {
          p.withinSeconds = 0;
          p.blockSeconds = Number.NaN;
        }
      }),
      files: access().files,
      expect: [
        { messageId: 'penaltyWithoutTtl', data: { key: 'strikes', field: 'withinSeconds' } },
        { messageId: 'penaltyWithoutTtl', data: { key: 'box', field: 'blockSeconds' } },
      ],
    },
    {
      name: 'a shipped Lua script that never sets an expiry',
      design: main().design,
      files: edit(main(), 'lua/gcra.lua', (c) => c.replace(/'PX'/g, "'XX'").replace(/'PEXPIRE'/g, "'PERSIST'")),
      expect: [{ messageId: 'luaWithoutTtl', data: { file: 'gcra.lua' } }],
    },
  ],
});
