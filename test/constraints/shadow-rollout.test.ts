import shadowRollout from '../../src/constraints/shadow-rollout.js';
import { getRule, mutate, validDesign } from '../fixtures/design.js';
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
      expect: [
        { messageId: 'notShadowFirst' },
        { messageId: 'firstStepNotShadow', data: { step: 'Allowlist legitimate offenders' } },
      ],
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
