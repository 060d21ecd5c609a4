import atomicCheck from '../../src/constraints/atomic-check.js';
import { forceField, getRule, mutate, validDesign } from '../fixtures/design.js';
import { access, edit, saas, without } from './broken-files.js';
import { runConstraintTests } from './tester.js';

const design = validDesign();

/** The fixture on one instance, where per-process state is the whole state. */
const single = mutate(design, (d) => {
  d.scope.topology = 'single';
  d.scope.instances = 1;
});

const REDIS_RULES = design.rules.filter((r) => r.primitive === 'redis-lua').map((r) => r.id);

runConstraintTests(atomicCheck, {
  valid: [
    { name: 'the reference design', design },
    {
      name: 'an in-process bucket on a single instance',
      design: mutate(single, (d) => {
        getRule(d, 'api-per-api-key').primitive = 'in-process';
      }),
    },
  ],
  invalid: [
    {
      name: 'INCR then EXPIRE races under concurrency',
      design: mutate(design, (d) => {
        getRule(d, 'api-per-api-key').primitive = 'incr-then-expire';
      }),
      expect: [{ messageId: 'notAtomic', ruleId: 'api-per-api-key', data: { primitive: 'incr-then-expire' } }],
    },
    {
      name: 'GET then SET races, and a rule names no primitive',
      design: mutate(design, (d) => {
        getRule(d, 'quota-free-monthly').primitive = 'get-then-set';
        delete getRule(d, 'auth-login-per-ip').primitive;
      }),
      expect: [
        { messageId: 'missingPrimitive', ruleId: 'auth-login-per-ip' },
        { messageId: 'notAtomic', ruleId: 'quota-free-monthly', data: { primitive: 'get-then-set' } },
      ],
    },
    {
      name: 'a primitive the tool does not know',
      design: mutate(design, (d) => {
        forceField(getRule(d, 'api-per-api-key'), 'primitive', 'watch-multi');
      }),
      expect: [{ messageId: 'notAtomic', ruleId: 'api-per-api-key', data: { primitive: 'watch-multi' } }],
    },
    {
      name: 'in-process state on a horizontally scaled service',
      design: mutate(design, (d) => {
        getRule(d, 'api-per-api-key').primitive = 'in-process';
      }),
      expect: [{ messageId: 'perInstanceState', ruleId: 'api-per-api-key', data: { instances: 4 } }],
    },
    {
      name: 'in-process state on a "single" topology that runs 3 instances',
      design: mutate(single, (d) => {
        d.scope.instances = 3;
        getRule(d, 'auth-login-per-username').primitive = 'in-process';
      }),
      expect: [{ messageId: 'perInstanceState', ruleId: 'auth-login-per-username', data: { instances: 3 } }],
    },
    {
      name: 'the enforcement section names no primitive',
      design: mutate(design, (d) => {
        d.enforcement.primitive = '  ';
      }),
      expect: [{ messageId: 'primitiveNotNamed' }],
    },
    {
      name: 'a gateway-native rule without a gateway',
      design: mutate(design, (d) => {
        d.scope.gateway = 'none';
      }),
      expect: [{ messageId: 'noGateway', ruleId: 'global-ceiling' }],
    },
    {
      name: 'Lua scripts without a store',
      design: mutate(design, (d) => {
        d.scope.store = 'none';
      }),
      expect: REDIS_RULES.map((ruleId) => ({ messageId: 'noStore', ruleId })),
    },
  ],
});

// What ships: the generated files checked against the design, and broken one at a time.
runConstraintTests(atomicCheck, {
  valid: [
    { name: 'the files generated for saas-platform', ...saas() },
    { name: 'the files of a design with a penalty box', ...access() },
  ],
  invalid: [
    {
      name: 'design.ts runs a penalty script other than the shipped lua/penalty.lua',
      design: access().design,
      files: edit(access(), 'lua/penalty.lua', (c) => `${c}-- edited\n`),
      expect: [{ messageId: 'scriptMismatch', data: { file: 'middleware/design.ts', script: 'penalty' } }],
    },
    {
      name: 'design.ts runs a script other than the shipped Lua',
      design: saas().design,
      files: edit(saas(), 'lua/gcra.lua', (c) => `${c}-- edited\n`),
      expect: [{ messageId: 'scriptMismatch', data: { file: 'middleware/design.ts', script: 'gcra' } }],
    },
    {
      name: 'design.ts runs a script the code folder does not ship',
      design: saas().design,
      files: without(saas(), 'lua/sliding-window-log.lua'),
      expect: [{ messageId: 'scriptNotShipped', data: { script: 'sliding-window-log' } }],
    },
    {
      name: 'a runtime module edited by hand (the limiter admits everything)',
      design: saas().design,
      files: edit(saas(), 'middleware/limiter.ts', (c) =>
        c.replace('export function createLimiter', '// patched\nexport function createLimiter'),
      ),
      expect: [{ messageId: 'runtimeEdited', data: { file: 'middleware/limiter.ts' } }],
    },
    {
      name: 'the framework adapter and the outbound client edited by hand',
      design: saas().design,
      files: edit({ ...saas(), files: edit(saas(), 'middleware/express.ts', (c) => `${c}// edited\n`) }, 'outbound/client.ts', (c) =>
        c.replace(/\n$/, '\n// edited\n'),
      ),
      expect: [
        { messageId: 'runtimeEdited', data: { file: 'middleware/express.ts' } },
        { messageId: 'runtimeEdited', data: { file: 'outbound/client.ts' } },
      ],
    },
  ],
});
