/** Outbound limits: a shared bucket per provider below its documented limit, 429 handling, circuit. */
import type { Diagram, MatrixRule, OutboundDesign, Scope } from './model.js';

const CIRCUIT: OutboundDesign['circuit'] = {
  failureThreshold: 3,
  openSeconds: 30,
  halfOpenProbes: 1,
  description:
    "Closed: calls flow through the shared bucket. After 3 provider 429s or 5xx within 30 s the circuit opens: calls are queued or shed without reaching the provider, for the provider's Retry-After or 30 s, whichever is longer. Then one probe call is let through (half-open): success closes the circuit, failure opens it again.",
};

function circuitDiagram(): Diagram {
  return {
    kind: 'state',
    title: 'Outbound circuit per provider',
    nodes: [
      { id: 'Closed', label: ['Closed'], shape: 'state' },
      { id: 'Open', label: ['Open'], shape: 'state' },
      { id: 'HalfOpen', label: ['Half-open'], shape: 'state' },
    ],
    edges: [
      { from: '[*]', to: 'Closed' },
      { from: 'Closed', to: 'Open', label: '3 provider 429s or 5xx in 30 s' },
      { from: 'Open', to: 'HalfOpen', label: 'Retry-After or 30 s elapsed' },
      { from: 'HalfOpen', to: 'Closed', label: 'probe succeeds' },
      { from: 'HalfOpen', to: 'Open', label: 'probe fails' },
    ],
  };
}

export function buildOutbound(scope: Scope, rules: MatrixRule[]): OutboundDesign | undefined {
  if (scope.outbound.length === 0) return undefined;
  const outRules = rules.filter((r) => r.tier === 'outbound');
  return {
    providers: scope.outbound.map((p) => {
      const rule = outRules.find((r) => r.title === `Calls to ${p.name}`);
      return { ...p, ruleId: rule?.id ?? '', key: rule?.key ?? '' };
    }),
    on429: [
      "Honour the provider's Retry-After: pause the shared bucket for that provider until then, so every instance stops at once (not just the one that saw the 429).",
      'Count the 429 towards the circuit; a provider 429 means the bucket and the provider disagree, so alert when it happens at all.',
      'Queue work that can wait (bounded queue, oldest dropped first with a metric); fail fast on work a user is waiting for, with a clear error.',
      'Retries use exponential backoff with full jitter and a retry budget; see the resilience design for the retry policy itself.',
    ],
    circuit: CIRCUIT,
    circuitDiagram: circuitDiagram(),
  };
}
