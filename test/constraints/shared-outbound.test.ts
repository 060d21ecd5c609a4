import { describe, expect, it } from 'vitest';
import { Answers } from '../../src/answers/schema.js';
import { checkDesign } from '../../src/constraints/index.js';
import sharedOutbound from '../../src/constraints/shared-outbound.js';
import { buildDesign } from '../../src/design/build.js';
import type { Design } from '../../src/design/model.js';
import { getRule, mutate, validDesign } from '../fixtures/design.js';
import { edit, saas } from './broken-files.js';
import { runConstraintTests } from './tester.js';
import { DATE, reviewAnswers, reviewDesign } from '../helpers/examples.js';

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

// Why it passes: a single instance's in-process bucket is the only one calling the provider.
describe('constraint 9 says why an in-process bucket passes', () => {
  const result = (d: Design) => checkDesign(d).find((r) => r.id === 'shared-outbound');

  it('one instance without a store: passes, naming the one process that holds the bucket', () => {
    const r = result(reviewDesign('nestjs-memory-quotas'));
    expect(r?.passed).toBe(true);
    expect(r?.note).toBe('one instance: its process holds the only bucket for Stripe');
  });

  it('several instances asked to run without a store: the design adds Redis and shares the bucket, so nothing to explain', () => {
    const answers = reviewAnswers('nestjs-memory-quotas');
    const d = buildDesign(Answers.parse({ ...answers, stack: { ...answers.stack, topology: 'horizontal', instances: 3 } }), { date: DATE });
    expect(d.scope.store).toBe('redis');
    expect(d.assumptions.find((a) => a.field === 'stack.store')?.text).toContain('per-instance counters would admit N times every limit');
    expect(d.outbound?.providers.map((p) => p.bucket)).toEqual(['shared']);
    const r = result(d);
    expect(r?.passed).toBe(true);
    expect(r?.note).toBeUndefined();
  });

  it('several instances with per-instance buckets fail, with no note', () => {
    const r = result(mutate(design, perInstance));
    expect(r?.passed).toBe(false);
    expect(r?.note).toBeUndefined();
    expect(sharedOutbound.passNote(design)).toBeUndefined();
  });
});
