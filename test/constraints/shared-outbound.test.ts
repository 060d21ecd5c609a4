import sharedOutbound from '../../src/constraints/shared-outbound.js';
import type { Design } from '../../src/design/model.js';
import { getRule, mutate, validDesign } from '../fixtures/design.js';
import { edit, saas } from './broken-files.js';
import { runConstraintTests } from './tester.js';

const design = validDesign();

function perInstance(d: Design): void {
  for (const p of d.scope.outbound) p.bucket = 'per-instance';
  for (const p of d.outbound?.providers ?? []) p.bucket = 'per-instance';
}

runConstraintTests(sharedOutbound, {
  valid: [
    { name: 'the reference design', design },
    {
      name: 'no third-party APIs: nothing to share',
      design: mutate(design, (d) => {
        d.scope.outbound = [];
        delete d.outbound;
        d.rules = d.rules.filter((r) => r.tier !== 'outbound');
      }),
    },
    {
      name: 'a per-instance, in-process bucket on a single instance',
      design: mutate(design, (d) => {
        d.scope.topology = 'single';
        d.scope.instances = 1;
        perInstance(d);
        getRule(d, 'outbound-payments').primitive = 'in-process';
      }),
    },
  ],
  invalid: [
    {
      name: 'per-instance buckets on 4 instances send 3.6 x the limit',
      design: mutate(design, perInstance),
      expect: [
        {
          messageId: 'perInstanceBucket',
          ruleId: 'outbound-payments',
          data: { provider: 'payments', instances: 4, fraction: 0.9, multiple: 3.6 },
        },
      ],
    },
    {
      name: 'a shared bucket declared, but the rule keeps it in process',
      design: mutate(design, (d) => {
        getRule(d, 'outbound-payments').primitive = 'in-process';
      }),
      expect: [{ messageId: 'inProcessOutbound', ruleId: 'outbound-payments', data: { provider: 'payments', instances: 4 } }],
    },
    {
      name: 'a provider with no outbound rule',
      design: mutate(design, (d) => {
        d.rules = d.rules.filter((r) => r.tier !== 'outbound');
      }),
      expect: [{ messageId: 'missingOutboundRule', data: { provider: 'payments' } }],
    },
    {
      name: 'a provider the outbound section does not link, on a horizontal service without a count',
      design: mutate(design, (d) => {
        delete d.outbound;
        perInstance(d);
        d.scope.instances = 1;
      }),
      expect: [
        { messageId: 'perInstanceBucket', data: { provider: 'payments', instances: 'several', multiple: 'N x 0.9' } },
        { messageId: 'missingOutboundRule', data: { provider: 'payments' } },
      ],
    },
  ],
});

// What ships: the generated files checked against the design, and broken one at a time.
runConstraintTests(sharedOutbound, {
  valid: [{ name: 'the files generated for saas-platform', ...saas() }],
  invalid: [
    {
      name: 'a provider bucket shipped per process',
      design: saas().design,
      files: edit(saas(), 'outbound/providers.ts', (c) =>
        c.replace(
          'ruleId: "outbound-stripe", key: "rl:{out:stripe}:bucket", shared: true',
          'ruleId: "outbound-stripe", key: "rl:{out:stripe}:bucket", shared: false',
        ),
      ),
      expect: [
        { messageId: 'providerNotSharedInFile', ruleId: 'outbound-stripe', data: { file: 'outbound/providers.ts', provider: 'Stripe' } },
      ],
    },
  ],
});
