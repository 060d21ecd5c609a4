/**
 * Constraint 2: the check-and-consume is atomic, and the design names the exact primitive.
 * Separate read and write calls race under concurrency; per-process state is only a
 * correct check when a single instance serves all traffic.
 */
import type { Primitive } from '../design/model.js';
import { defineConstraint } from './define.js';
import { instancesText, isNonEmptyString, isScaledOut, ruleIdOf, rulesOf, show } from './guards.js';
import { createHash } from 'node:crypto';
import { DESIGN_DATA_FILE, fileOf, shippedDesign, shippedLua } from './artefacts.js';
import { FRAMEWORK_ADAPTERS } from '../answers/choices.js';
import { RUNTIME_MODULES } from '../codegen/middleware/index.js';
import { runtimeHeader, runtimeSource } from '../codegen/runtime-files.js';
import { TOOL_VERSION } from '../version.js';

/**
 * The runtime files generation copies verbatim (after one header line): what decides, keys,
 * counts and answers every request. A byte that differs is code nobody reviewed with the design.
 */
const COPIED_RUNTIME: readonly (readonly ['middleware' | 'outbound', string])[] = [
  ...RUNTIME_MODULES.map((file) => ['middleware', file] as const),
  ...[...new Set(Object.values(FRAMEWORK_ADAPTERS).filter((f): f is string => f !== null))].map((file) => ['middleware', file] as const),
  ['outbound', 'client.ts'],
  ['outbound', 'types.ts'],
];

const ATOMIC: readonly Primitive[] = ['redis-lua', 'gateway-native', 'in-process'];

export default defineConstraint({
  meta: {
    id: 'atomic-check',
    number: 2,
    title: 'Check-and-consume is atomic',
    description:
      'The design names its atomic primitive, and every rule consumes through one (Lua script, gateway-native limiter, or in-process state on a single instance).',
    messages: {
      primitiveNotNamed: 'The enforcement section does not name the atomic primitive.',
      missingPrimitive: 'The rule does not state how it checks and consumes.',
      notAtomic:
        '{{primitive}} is not atomic: concurrent requests can both read the last token and both be admitted. Use a Lua script or a gateway-native limiter.',
      perInstanceState:
        'In-process state is per instance, but the service runs {{instances}} instances; each admits the full limit. Keep the state in the shared store.',
      noGateway: 'The rule relies on a gateway-native limiter, but the design has no gateway.',
      noStore: 'The rule runs a Lua script, but the design has no store to run it in.',
      scriptNotShipped: '{{file}} runs {{script}} for the middleware rules, but the code folder ships no lua/{{script}}.lua.',
      runtimeEdited:
        '{{file}} is not the runtime file rl-design {{version}} ships (edited by hand, or written by another version): the middleware runs that file, and this check vouches only for the one generated with the design. Generate it again.',
      scriptMismatch:
        'The {{script}} script in {{file}} is not the shipped lua/{{script}}.lua byte for byte (SHA1 {{sha1}} against {{shipped}}): EVALSHA would run another script than the one reviewed.',
    },
  },
  check(design, report) {
    if (!isNonEmptyString(design?.enforcement?.primitive)) report({ messageId: 'primitiveNotNamed' });

    const scope = design?.scope;
    for (const rule of rulesOf(design)) {
      const ruleId = ruleIdOf(rule);
      const primitive = rule.primitive;
      if (primitive === undefined || primitive === null) {
        report({ messageId: 'missingPrimitive', ruleId });
      } else if (!ATOMIC.includes(primitive)) {
        report({ messageId: 'notAtomic', ruleId, data: { primitive: show(primitive) } });
      } else if (primitive === 'in-process' && isScaledOut(scope)) {
        report({ messageId: 'perInstanceState', ruleId, data: { instances: instancesText(scope?.instances) } });
      } else if (primitive === 'gateway-native' && scope?.gateway === 'none') {
        report({ messageId: 'noGateway', ruleId });
      } else if (primitive === 'redis-lua' && scope?.store === 'none') {
        report({ messageId: 'noStore', ruleId });
      }
    }
  },
  checkFiles(_design, files, report) {
    for (const [folder, file] of COPIED_RUNTIME) {
      const shipped = fileOf(files, `${folder}/${file}`);
      if (shipped === undefined) continue;
      if (shipped.content !== runtimeHeader(TOOL_VERSION) + runtimeSource(folder, file)) {
        report({ messageId: 'runtimeEdited', data: { file: shipped.path, version: TOOL_VERSION } });
      }
    }
    const data = shippedDesign(files);
    const lua = shippedLua(files);
    for (const script of data?.scripts ?? []) {
      const shipped = lua.get(`${script.name}.lua`);
      if (shipped === undefined) {
        report({ messageId: 'scriptNotShipped', data: { file: DESIGN_DATA_FILE, script: script.name } });
        continue;
      }
      const sha1 = createHash('sha1').update(shipped).digest('hex');
      if (script.source !== shipped || script.sha1 !== sha1) {
        report({ messageId: 'scriptMismatch', data: { file: DESIGN_DATA_FILE, script: script.name, sha1: script.sha1, shipped: sha1 } });
      }
    }
  },
});
