import quotaBillingSeparation from '../../src/constraints/quota-billing-separation.js';
import { mutate, validDesign } from '../fixtures/design.js';
import { runConstraintTests } from './tester.js';

const design = validDesign();

/** The fixture with no plan quotas at all. */
const noQuotas = mutate(design, (d) => {
  for (const plan of d.scope.plans) delete plan.quota;
  d.rules = d.rules.filter((r) => r.tier !== 'quota');
  delete d.quotas;
});

runConstraintTests(quotaBillingSeparation, {
  valid: [
    { name: 'the reference design', design },
    { name: 'no plan quotas: nothing to separate', design: noQuotas },
  ],
  invalid: [
    {
      name: 'invoices computed from the limiter counters',
      design: mutate(design, (d) => {
        if (d.quotas) d.quotas.billingSource = 'limiter-counters';
      }),
      expect: [{ messageId: 'billingFromLimiter', data: { billingSource: 'limiter-counters' } }],
    },
    {
      name: 'the separation left unsaid',
      design: mutate(design, (d) => {
        if (d.quotas) d.quotas.separation = '';
      }),
      expect: [{ messageId: 'separationNotStated' }],
    },
    {
      name: 'a plan with a quota but no quota section',
      design: mutate(noQuotas, (d) => {
        const plan = d.scope.plans[0];
        if (plan) plan.quota = 1_000;
      }),
      expect: [{ messageId: 'missingQuotaDesign' }],
    },
    {
      name: 'a hand-written quota rule but no quota section',
      design: mutate(design, (d) => {
        for (const plan of d.scope.plans) delete plan.quota;
        delete d.quotas;
      }),
      expect: [{ messageId: 'missingQuotaDesign' }],
    },
  ],
});
