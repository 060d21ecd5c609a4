import authDualKey from '../../src/constraints/auth-dual-key.js';
import type { Design } from '../../src/design/model.js';
import { getRule, mutate, validDesign } from '../fixtures/design.js';
import { access } from './broken-files.js';
import { runConstraintTests } from './tester.js';

const design = validDesign();

function withoutRules(d: Design, ...ids: string[]): void {
  d.rules = d.rules.filter((r) => !ids.includes(r.id));
}

/** Adds a password-reset endpoint to the scope. */
function addReset(d: Design): void {
  d.scope.endpoints.push({
    name: 'password-reset',
    method: 'POST',
    route: '/v1/auth/reset',
    class: 'auth',
    authKind: 'password-reset',
    anonymous: true,
    cost: 1,
  });
}

runConstraintTests(authDualKey, {
  valid: [
    { name: 'the reference design', design },
    { name: 'an allowlist that skips only fairness and quota rules', design: access().design },
    {
      name: 'no auth endpoints: nothing to check',
      design: mutate(design, (d) => {
        d.scope.endpoints = d.scope.endpoints.filter((e) => e.class !== 'auth');
        withoutRules(d, 'auth-login-per-username', 'auth-login-per-ip');
      }),
    },
    {
      name: 'rules with no endpoint list cover every auth endpoint',
      design: mutate(design, (d) => {
        addReset(d);
        getRule(d, 'auth-login-per-username').endpoints = [];
        getRule(d, 'auth-login-per-ip').endpoints = [];
      }),
    },
    {
      name: 'a per-session identity limit counts as per-identity',
      design: mutate(design, (d) => {
        getRule(d, 'auth-login-per-username').identity = 'session';
      }),
    },
  ],
  invalid: [
    {
      name: 'an allowlist that lifts the auth rows',
      design: mutate(access().design, (d) => {
        const allow = d.access?.allow;
        if (allow) allow.ruleIds = [...allow.ruleIds, 'auth-login-per-identity', 'auth-login-per-ip'];
      }),
      expect: [
        {
          messageId: 'allowlistSkipsAuth',
          ruleId: 'auth-login-per-identity',
          data: { who: 'addresses in 198.51.100.0/24, api-key "svc-monitor", requests to GET /v1/items/:id' },
        },
        { messageId: 'allowlistSkipsAuth', ruleId: 'auth-login-per-ip' },
      ],
    },
    {
      name: 'per-username only: credential stuffing across usernames is open',
      design: mutate(design, (d) => withoutRules(d, 'auth-login-per-ip')),
      expect: [{ messageId: 'missingDimension', ruleId: 'auth-login-per-username', data: { endpoint: 'login', missing: 'per-ip' } }],
    },
    {
      name: 'per-IP only: a botnet can guess one password from many addresses',
      design: mutate(design, (d) => withoutRules(d, 'auth-login-per-username')),
      expect: [{ messageId: 'missingDimension', ruleId: 'auth-login-per-ip', data: { endpoint: 'login', missing: 'per-identity' } }],
    },
    {
      name: 'an auth endpoint no rule names',
      design: mutate(design, addReset),
      expect: [
        { messageId: 'missingDimension', data: { endpoint: 'password-reset', missing: 'per-identity' } },
        { messageId: 'missingDimension', data: { endpoint: 'password-reset', missing: 'per-ip' } },
      ],
    },
    {
      name: 'a per-IP rule for all endpoints is not an auth limit, nor is a per-tenant one',
      design: mutate(design, (d) => {
        getRule(d, 'auth-login-per-ip').endpointClass = 'all';
        getRule(d, 'auth-login-per-username').identity = 'tenant';
      }),
      expect: [
        { messageId: 'missingDimension', data: { endpoint: 'login', missing: 'per-identity' } },
        { messageId: 'missingDimension', data: { endpoint: 'login', missing: 'per-ip' } },
      ],
    },
  ],
});
