/**
 * Constraint 9: when the service calls rate-limited third-party APIs, each provider has an
 * outbound rule whose bucket is shared by every instance: N instances each allowed 90% of
 * the provider's limit together send N x 0.9 of it.
 */
import { joinAnd } from '../format.js';
import { defineConstraint } from './define.js';
import { instancesText, isPositiveNumber, isScaledOut, objects, ruleIdOf, rulesOf, show } from './guards.js';
import { PROVIDERS_FILE, shippedProviders } from './artefacts.js';

/** The safety fraction (90 % of a provider's limit) used when a provider states none. */
const DEFAULT_FRACTION = 0.9;

export default defineConstraint({
  meta: {
    id: 'shared-outbound',
    number: 9,
    title: 'Outbound buckets are shared across instances',
    description:
      'Each third-party provider has an outbound rule, and when more than one instance calls it, its bucket lives in the shared store.',
    messages: {
      missingOutboundRule: 'Provider {{provider}} has no outbound rule (tier outbound, linked from the outbound section).',
      perInstanceBucket:
        'Provider {{provider}} has a per-instance bucket: {{instances}} instances each at {{fraction}} of its limit send up to {{multiple}} x the limit. Share one bucket in the store.',
      inProcessOutbound:
        'The outbound rule for {{provider}} keeps its bucket in process, so {{instances}} instances each spend the full budget. Use the shared store.',
      providerNotSharedInFile:
        '{{file}} keeps the bucket of provider {{provider}} in each process (shared: false, or no Redis key), though the design shares it across instances.',
    },
  },
  applies: (design) => objects(design?.scope?.outbound).length > 0,
  check(design, report) {
    const scope = design?.scope;
    const scaledOut = isScaledOut(scope);
    const instances = instancesText(scope?.instances);
    const linked = objects(design?.outbound?.providers);
    const rules = rulesOf(design);

    for (const provider of objects(scope?.outbound)) {
      const name = show(provider.name ?? 'unnamed');
      const entry = linked.find((p) => p.name === provider.name);
      const rule = rules.find((r) => r.tier === 'outbound' && entry !== undefined && r.id === entry.ruleId);
      const ruleId = rule && ruleIdOf(rule);

      const perInstance = provider.bucket !== 'shared' || (entry !== undefined && entry.bucket !== 'shared');
      if (scaledOut && perInstance) {
        const fraction = isPositiveNumber(provider.safetyFraction) ? provider.safetyFraction : DEFAULT_FRACTION;
        const multiple = typeof instances === 'number' ? Math.round(instances * fraction * 100) / 100 : `N x ${fraction}`;
        report({ messageId: 'perInstanceBucket', ruleId, data: { provider: name, instances, fraction, multiple } });
      }

      if (rule === undefined) {
        report({ messageId: 'missingOutboundRule', data: { provider: name } });
      } else if (scaledOut && rule.primitive === 'in-process') {
        report({ messageId: 'inProcessOutbound', ruleId, data: { provider: name, instances } });
      }
    }
  },
  passNote(design) {
    // one instance: a bucket in its process is the only one calling the provider
    if (isScaledOut(design?.scope)) return undefined;
    const local = objects(design?.outbound?.providers)
      .filter((p) => p.bucket !== 'shared')
      .map((p) => show(p.name ?? 'unnamed'));
    if (local.length === 0) return undefined;
    return `one instance: its process holds the only ${local.length === 1 ? 'bucket' : 'buckets'} for ${joinAnd(local)}`;
  },
  checkFiles(design, files, report) {
    const shipped = shippedProviders(files);
    for (const rule of rulesOf(design)) {
      const ruleId = ruleIdOf(rule);
      if (rule.tier !== 'outbound' || ruleId === undefined || rule.primitive !== 'redis-lua') continue;
      const p = shipped.find((x) => x.ruleId === ruleId);
      // a missing provider is the complete-rules check's finding
      if (p && (!p.shared || !p.key))
        report({ messageId: 'providerNotSharedInFile', ruleId, data: { file: PROVIDERS_FILE, provider: p.name } });
    }
  },
});
