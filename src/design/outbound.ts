/** Outbound limits: a bucket per provider below its documented limit (shared through the store, or in-process), 429 handling, circuit. */
import type { Diagram, MatrixRule, OutboundDesign, Scope } from './model.js';
import { formatNumber, joinAnd } from '../format.js';
import { runsOnNode } from './naming.js';

/** The per-provider circuit of the outbound client: what the document states and providers.ts ships. */
export const OUTBOUND_CIRCUIT: OutboundDesign['circuit'] = circuitWith(
  {
    failureThreshold: 3,
    windowSeconds: 30,
    openSeconds: 30,
    halfOpenProbes: 1,
  },
  true,
);

function circuitWith(c: Omit<OutboundDesign['circuit'], 'description'>, shared: boolean): OutboundDesign['circuit'] {
  const probes = c.halfOpenProbes === 1 ? 'one probe call is' : `${c.halfOpenProbes} probe calls are`;
  return {
    ...c,
    description: `Closed: calls flow through ${shared ? 'the shared bucket' : "their provider's bucket"}. After ${c.failureThreshold} provider 429s or failures (5xx, unreachable) within ${c.windowSeconds} s the circuit opens: calls are refused (CIRCUIT_OPEN) without reaching the provider, for the provider's Retry-After or ${c.openSeconds} s, whichever is longer. Then ${probes} let through (half-open): success closes the circuit, failure opens it again. The circuit is kept per provider in each process.`,
  };
}

function circuitDiagram(c: OutboundDesign['circuit']): Diagram {
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
      { from: 'Closed', to: 'Open', label: `${c.failureThreshold} provider 429s or 5xx in ${c.windowSeconds} s` },
      { from: 'Open', to: 'HalfOpen', label: `Retry-After or ${c.openSeconds} s elapsed` },
      { from: 'HalfOpen', to: 'Closed', label: 'probe succeeds' },
      { from: 'HalfOpen', to: 'Open', label: 'probe fails' },
    ],
  };
}

/**
 * What one call takes from a bucket: a slot by default, so a provider limit counted in tokens
 * (an LLM's tokens per minute) is enforced only when each call passes its tokens as its cost,
 * and a call costing more than the burst never fits.
 */
function unitsNote(scope: Scope): string {
  const bursts = scope.outbound.map((p) => `${p.name} ${formatNumber(p.burst)}`).join(', ');
  return `Each call takes one unit of its provider's bucket unless it says otherwise: the bucket counts calls. Where a provider's limit counts something else (tokens per minute, say), pass what the call will use as its cost, schedule(provider, fn, { cost }), an estimate made before the call (for tokens: the prompt's plus the most the reply may use); without it the bucket admits its rate in calls, each of any size. A call costing more than the bucket's burst (${bursts}) never fits: it is refused at once with COST_TOO_HIGH, without calling the provider, so size the burst to at least the largest call.`;
}

/**
 * Where each provider's bucket lives, as the generated client runs it (providers.ts: shared when
 * its rule runs outbound-bucket.lua in the store, else in this process), and the sentence the
 * document opens its outbound section with.
 */
function bucketPlaces(scope: Scope, providers: readonly { name: string; shared: boolean }[]): string {
  const shared = providers.filter((p) => p.shared).map((p) => p.name);
  const local = providers.filter((p) => !p.shared).map((p) => p.name);
  const sharedText = 'kept in the shared store so that every instance draws from the same budget';
  const localText =
    scope.instances > 1
      ? `kept in each instance's memory, so each of the ${scope.instances} instances draws from a budget of its own`
      : "kept in this process's memory (an in-process bucket): the design runs one instance, so that bucket is the whole budget. A restart starts it full and forgets a provider pause";
  if (local.length === 0) return `Calls this service makes to third-party APIs go through one bucket per provider, ${sharedText}.`;
  // client.ts keeps an in-process bucket in the client object's Map, under the provider's name
  const keyed = ` The outbound client keeps ${local.length > 1 ? 'each in-process bucket' : 'the in-process bucket'} in a Map of its own, under the provider's name (the Key column), so make one client per process and share it: a second client keeps a second bucket.`;
  if (shared.length === 0) return `Calls this service makes to third-party APIs go through one bucket per provider, ${localText}.${keyed}`;
  return `Calls this service makes to third-party APIs go through one bucket per provider: ${joinAnd(shared)} ${sharedText}; ${joinAnd(local)} ${localText}.${keyed}`;
}

export function buildOutbound(scope: Scope, rules: MatrixRule[]): OutboundDesign | undefined {
  if (scope.outbound.length === 0) return undefined;
  const outRules = rules.filter((r) => r.tier === 'outbound');
  const providers = scope.outbound.map((p) => {
    const rule = outRules.find((r) => r.title === `Calls to ${p.name}`);
    // the bucket the client runs: the rule's primitive (a design without a store keeps it in-process whatever the answers asked)
    const shared = rule ? rule.primitive === 'redis-lua' : p.bucket === 'shared' && scope.store !== 'none';
    return { ...p, bucket: shared ? ('shared' as const) : ('per-instance' as const), ruleId: rule?.id ?? '', key: rule?.key ?? '' };
  });
  const placed = providers.map((p) => ({ name: p.name, shared: p.bucket === 'shared' }));
  const anyShared = placed.some((p) => p.shared);
  const allShared = placed.every((p) => p.shared);
  const pauseWhat = allShared
    ? 'pause the shared bucket for that provider until then, so every instance stops at once (not just the one that saw the 429)'
    : anyShared
      ? "pause the provider's bucket until then: a shared bucket pauses every instance at once (not just the one that saw the 429), an in-process one this process"
      : scope.instances > 1
        ? "pause the provider's bucket until then; the bucket is in-process, so only the instance that saw the 429 stops"
        : "pause the provider's bucket until then; the bucket is in-process and the design runs one instance, so every call to that provider waits";
  return {
    intro: bucketPlaces(scope, placed),
    providers,
    on429: [
      `Honour the provider's Retry-After: ${pauseWhat}.`,
      'Count the 429 towards the circuit; a provider 429 means the bucket and the provider disagree, so alert when it happens at all.',
      `${runsOnNode(scope.language) ? 'The generated client' : `The generated client (TypeScript: in this ${scope.language} service, its port, which the code README's outbound calls specify)`} waits for a slot in the bucket at most maxWaitMs (an option of the client and of each call); past that, ${anyShared ? 'while the circuit is open or while the store is unreachable' : 'or while the circuit is open'}, it throws (${anyShared ? 'WAIT_TOO_LONG, CIRCUIT_OPEN, STORE_UNAVAILABLE' : 'WAIT_TOO_LONG, CIRCUIT_OPEN'}) without calling the provider.${anyShared ? '' : ' The bucket is in-process, so no store call can fail: STORE_UNAVAILABLE never comes.'} Queue work that can wait (a bounded queue, oldest dropped first, with a metric); fail fast on work a user is waiting for, with a clear error.`,
      'The client does not retry a failed call; where your code retries, use exponential backoff with full jitter and a retry budget, and send each retry through the client so it takes its place in the bucket.',
      unitsNote(scope),
    ],
    circuit: anyShared ? OUTBOUND_CIRCUIT : circuitWith(OUTBOUND_CIRCUIT, false),
    circuitDiagram: circuitDiagram(OUTBOUND_CIRCUIT),
  };
}
