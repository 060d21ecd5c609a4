import completeRules from '../../src/constraints/complete-rules.js';
import { forceField, getRule, mutate, validDesign } from '../fixtures/design.js';
import { runConstraintTests } from './tester.js';

const design = validDesign();

runConstraintTests(completeRules, {
  valid: [
    { name: 'the reference design', design },
    {
      name: 'a window rule that leaves burst out',
      design: mutate(design, (d) => {
        delete getRule(d, 'auth-login-per-ip').burst;
      }),
    },
    {
      name: 'a GCRA rule with a burst',
      design: mutate(design, (d) => {
        getRule(d, 'api-per-api-key').algorithm = 'gcra';
      }),
    },
  ],
  invalid: [
    {
      name: 'a rule without an algorithm',
      design: mutate(design, (d) => {
        delete getRule(d, 'api-per-api-key').algorithm;
      }),
      expect: [{ messageId: 'missingField', ruleId: 'api-per-api-key', data: { field: 'algorithm' } }],
    },
    {
      name: 'a leaky bucket (nginx) without a burst',
      design: mutate(design, (d) => {
        getRule(d, 'global-ceiling').burst = null;
      }),
      expect: [{ messageId: 'missingField', ruleId: 'global-ceiling', data: { field: 'burst' } }],
    },
    {
      name: 'a hand-written rule with only a rate, one finding per missing field',
      design: mutate(design, (d) => {
        const rule = getRule(d, 'quota-free-monthly');
        delete rule.key;
        delete rule.cost;
        delete rule.failMode;
        delete rule.layer;
      }),
      expect: ['key', 'cost', 'failMode', 'layer'].map((field) => ({
        messageId: 'missingField',
        ruleId: 'quota-free-monthly',
        data: { field },
      })),
    },
    {
      name: 'a zero rate and a zero endpoint weight',
      design: mutate(design, (d) => {
        const rule = getRule(d, 'api-per-api-key');
        rule.rate = { requests: 0, periodSeconds: 1 };
        rule.cost = { default: 1, byEndpoint: [{ endpoint: 'export-orders', cost: 0 }] };
      }),
      expect: [
        { messageId: 'invalidField', ruleId: 'api-per-api-key', data: { field: 'rate' } },
        { messageId: 'invalidField', ruleId: 'api-per-api-key', data: { field: 'cost' } },
      ],
    },
    {
      name: 'an algorithm the tool does not know',
      design: mutate(design, (d) => {
        forceField(getRule(d, 'global-ceiling'), 'algorithm', 'adaptive-window');
      }),
      expect: [{ messageId: 'invalidField', ruleId: 'global-ceiling', data: { field: 'algorithm', value: 'adaptive-window' } }],
    },
    {
      name: 'a sliding window log that claims a burst',
      design: mutate(design, (d) => {
        getRule(d, 'auth-login-per-username').burst = 10;
      }),
      expect: [{ messageId: 'burstNotApplicable', ruleId: 'auth-login-per-username', data: { algorithm: 'sliding-window-log' } }],
    },
    {
      name: 'an empty matrix',
      design: mutate(design, (d) => {
        d.rules = [];
      }),
      expect: [{ messageId: 'emptyMatrix' }],
    },
  ],
});
