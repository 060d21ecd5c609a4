import shadowRollout from '../../src/constraints/shadow-rollout.js';
import { getRule, mutate, validDesign } from '../fixtures/design.js';
import { edit, main, saas } from './broken-files.js';
import { runConstraintTests } from './tester.js';

const design = validDesign();

runConstraintTests(shadowRollout, {
  valid: [
    { name: 'the reference design', design },
    {
      name: 'steps listed out of order: the lowest order number is the first step',
      design: mutate(design, (d) => {
        d.rollout.steps.reverse();
      }),
    },
  ],
  invalid: [
    {
      name: 'enforcing from day one',
      design: mutate(design, (d) => {
        d.rollout.startsInShadow = false;
        d.rollout.steps = d.rollout.steps.filter((s) => !/shadow/i.test(s.title));
      }),
      expect: [{ messageId: 'notShadowFirst' }, { messageId: 'firstStepNotShadow', data: { step: 'Allowlist legitimate offenders' } }],
    },
    {
      name: 'shadow mode for zero days',
      design: mutate(design, (d) => {
        d.rollout.shadowDays = 0;
      }),
      expect: [{ messageId: 'noShadowPeriod' }],
    },
    {
      name: 'a rollout plan without steps',
      design: mutate(design, (d) => {
        d.rollout.steps = [];
      }),
      expect: [{ messageId: 'noSteps' }],
    },
    {
      name: 'a rule without a kill switch',
      design: mutate(design, (d) => {
        delete getRule(d, 'quota-free-monthly').killSwitch;
        d.rollout.killSwitches = d.rollout.killSwitches.filter((k) => k.ruleId !== 'quota-free-monthly');
      }),
      expect: [{ messageId: 'missingKillSwitch', ruleId: 'quota-free-monthly' }],
    },
    {
      name: 'kill switches the rollout plan does not list, or lists under another flag',
      design: mutate(design, (d) => {
        d.rollout.killSwitches = d.rollout.killSwitches.filter((k) => k.ruleId !== 'global-ceiling');
        getRule(d, 'auth-login-per-ip').killSwitch = { flag: 'login-ip-limit' };
      }),
      expect: [
        { messageId: 'killSwitchNotInRollout', ruleId: 'global-ceiling' },
        {
          messageId: 'killSwitchMismatch',
          ruleId: 'auth-login-per-ip',
          data: { ruleFlag: 'login-ip-limit', rolloutFlag: 'ratelimit.auth-login-per-ip.enabled' },
        },
      ],
    },
  ],
});

// What ships: the generated files checked against the design, and broken one at a time.
runConstraintTests(shadowRollout, {
  valid: [{ name: 'the files generated for saas-platform', ...saas() }],
  invalid: [
    {
      name: 'design.ts starts the rules in enforce mode',
      design: main().design,
      files: edit(main(), 'middleware/design.ts', (c) => c.replace('defaultMode: "shadow"', 'defaultMode: "enforce"')),
      expect: [{ messageId: 'notShadowInFile', data: { file: 'middleware/design.ts', mode: 'enforce' } }],
    },
    {
      name: 'nginx enforces from the start (no dry run)',
      design: saas().design,
      files: edit(saas(), 'gateway/nginx-server.conf', (c) => c.replace('limit_req_dry_run on;', 'limit_req_dry_run off;')),
      expect: [{ messageId: 'notShadowInFile', data: { file: 'gateway/nginx-server.conf' } }],
    },
    {
      name: 'a middleware rule shipped without its kill switch',
      design: saas().design,
      files: edit(saas(), 'middleware/design.ts', (c) => c.replace('flag: "ratelimit.fairness-free.mode"', 'flag: null')),
      expect: [
        {
          messageId: 'killSwitchNotShipped',
          ruleId: 'fairness-free',
          data: { flag: 'ratelimit.fairness-free.mode', file: 'middleware/design.ts' },
        },
      ],
    },
    {
      name: 'an outbound provider shipped without its kill switch',
      design: saas().design,
      files: edit(saas(), 'outbound/providers.ts', (c) => c.replace(', killSwitchFlag: "ratelimit.outbound-stripe.mode"', '')),
      expect: [{ messageId: 'killSwitchNotShipped', ruleId: 'outbound-stripe', data: { file: 'outbound/providers.ts' } }],
    },
    {
      name: 'an edge rule whose gateway config has no kill switch for it',
      design: saas().design,
      files: edit(saas(), 'gateway/nginx-server.conf', (c) => c.replace('comment out its limit_req line', 'see the team wiki')),
      expect: [
        {
          messageId: 'edgeKillSwitchNotShipped',
          ruleId: 'global-ceiling',
          data: { file: 'gateway/nginx-server.conf, gateway/nginx.conf' },
        },
      ],
    },
  ],
});
