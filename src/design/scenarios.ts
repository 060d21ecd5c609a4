/** The six test scenarios, each tied to the rules it exercises. */
import { formatNumber, rateWords } from '../format.js';
import { runBurst } from './algorithms.js';
import { type Enforcement, keepsStateInStore, type MatrixRule, type Scenario, type Scope } from './model.js';

/** What the scenarios need to know beyond the rules: where the requests come from. */
export interface ScenarioContext {
  topology: Scope['topology'];
  instances: number;
  /** The in-process buckets in front of Redis, when the design has them. */
  hybrid?: Enforcement['hybrid'];
  /** The fail-open rules the memory fallback decides while the store is down. */
  fallback?: Enforcement['fallback'];
}

/** How rl-design verify keeps refills out of the exact counts (src/verify/shapes.ts). */
const VERIFY_REFILL = 'rl-design verify runs it with a refill slow enough that none comes back, at most one token per 5 s';

/** Seconds between two tokens of a bucket rule (its emission interval). */
function intervalSeconds(rule: MatrixRule): number {
  const rate = rule.rate;
  return rate && rate.requests > 0 ? rate.periodSeconds / rate.requests : 1;
}

function durationText(seconds: number): string {
  if (seconds < 1) return `${formatNumber(Math.round(seconds * 100000) / 100)} ms`;
  return `${formatNumber(seconds)} s`;
}

/** "one token comes back every 20 ms at 50/s". */
function refillText(rule: MatrixRule): string {
  return `one token comes back every ${durationText(intervalSeconds(rule))} at ${rule.rate ? rateWords(rule.rate.requests, rule.rate.periodSeconds) : 'its rate'}`;
}

/** A middleware rule the runtime runs as a GCRA bucket (with the burst runBurst gives). */
function isBucket(r: MatrixRule): boolean {
  return r.layer === 'middleware' && r.algorithm !== undefined && runBurst(r) !== null;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** The cheapest call after the weighted one: a cost-1 endpoint of the rule when it has one, else its lightest other endpoint, else none. */
interface LightCall {
  /** Undefined: some endpoint of the rule takes the default cost 1 (named when known). */
  endpoint?: string;
  cost: number;
}

function lightCall(rule: MatrixRule, heavy: string): LightCall | undefined {
  const cost = rule.cost;
  if (!cost) return { cost: 1 };
  // a rule naming no endpoint covers a whole class, where unweighted endpoints cost the default
  if (rule.endpoints.length === 0) return { cost: cost.default };
  const others = rule.endpoints
    .filter((e) => e !== heavy)
    .map((endpoint) => ({ endpoint, cost: cost.byEndpoint.find((w) => w.endpoint === endpoint)?.cost ?? cost.default }));
  const lightest = others.reduce<LightCall | undefined>((a, c) => (a === undefined || c.cost < a.cost ? c : a), undefined);
  if (!lightest) return undefined;
  return lightest.cost === 1 ? { cost: 1, endpoint: lightest.endpoint } : lightest;
}

/** "a cost-1 call", or "a call to graphql-query (cost 5)" when no endpoint of the rule costs 1. */
function lightText(light: LightCall): string {
  return light.cost === 1 ? 'a cost-1 call' : `a call to ${light.endpoint} (cost ${light.cost})`;
}

function costExpectation(rule: MatrixRule, burst: number, endpoint: string, cost: number, light: LightCall | undefined): string {
  // verify probes what is left with the smallest call there is, cost 1, whatever the endpoints cost
  const probe =
    light && light.cost !== 1
      ? ' rl-design verify probes what is left with cost-1 calls through the limiter, the smallest calls there are.'
      : '';
  if (cost > burst) {
    return `No call to ${endpoint} can ever pass: its cost ${cost} exceeds the whole bucket (burst ${burst}), so it is refused at once with no Retry-After that would help${light && light.cost <= burst ? `; ${lightText(light)} still passes` : ''}.${probe}`;
  }
  const calls = Math.floor(burst / cost);
  const left = burst % cost;
  const counted = `${plural(calls, 'call')} to ${endpoint} ${calls === 1 ? 'passes' : 'pass'} (burst ${burst} / cost ${cost}) and the next is refused`;
  let tail = '';
  if (light && left >= light.cost) {
    tail =
      light.cost === 1
        ? `; a cost-1 call can then spend the ${plural(left, 'leftover token')}`
        : `; ${lightText(light)} can then spend ${light.cost} of the ${plural(left, 'leftover token')}`;
  } else if (light && light.cost === 1) {
    tail = `; a cost-1 call sent right after is refused too, because the weighted calls spent the whole bucket, unless a token has come back in the meantime: the refused call waits for ${cost} tokens, a cost-1 call for only one, and ${refillText(rule)}`;
  } else if (light) {
    const needs = light.cost - left;
    tail = `; ${lightText(light)} sent right after is refused too, because the weighted calls spent ${left > 0 ? `all but ${plural(left, 'token')} of the bucket` : 'the whole bucket'}, unless enough tokens have come back in the meantime: the refused call waits for ${plural(cost - left, 'token')}, ${light.endpoint} for ${needs}, and ${refillText(rule)}`;
  }
  return `${counted}${tail}.${probe} The counts are exact only while no token refills between the calls; ${VERIFY_REFILL}.`;
}

/** What the concurrent race admits: exactly the tokens left, or more through the in-process buckets. */
function raceExpectation(rule: MatrixRule, ctx: ScenarioContext | undefined): string {
  const exact = `no token refills during the race (${refillText(rule)}; ${VERIFY_REFILL})`;
  const hybrid = ctx?.hybrid;
  if (hybrid?.ruleIds.includes(rule.id)) {
    const bound = 10 + hybrid.overAdmission;
    return `With the middleware option hybrid: false (the in-process buckets off, as rl-design verify runs it), exactly 10 are admitted and 190 get 429 when ${exact}; the check-and-consume is atomic, so no two requests spend the same token. With the in-process buckets on (section 4), each of the ${hybrid.instances} instances may admit up to ${plural(hybrid.localBurst, 'request')} on local credit before the charge reaches Redis, so at most 10 + ${hybrid.instances} x ${hybrid.localBurst} = ${bound} are admitted.`;
  }
  return `Exactly 10 are admitted and 190 get 429 when ${exact}: the check-and-consume is atomic, so no two requests spend the same token.`;
}

/** What Retry-After really promises for a bucket rule. */
function recoveryExpectation(rule: MatrixRule): string {
  const interval = intervalSeconds(rule);
  const most = Math.max(1, Math.ceil(interval - 1e-9));
  const retryAfter = most === 1 ? '1 s here' : `at most ${most} s here`;
  return `The request sent after the wait is admitted. The real wait is until the next token comes back, at most ${durationText(interval)} after the refusal (${refillText(rule)}); Retry-After is that wait rounded up to whole seconds (${retryAfter}), so a request sent before Retry-After has passed may be admitted too. What is guaranteed: a request sent after Retry-After is admitted, and one sent before the first token refills is refused.`;
}

export function buildScenarios(rules: MatrixRule[], ctx?: ScenarioContext): Scenario[] {
  const bucket = rules.find((r) => r.tier === 'fairness' && isBucket(r)) ?? rules.find(isBucket);
  const weighted = rules.find((r) => isBucket(r) && (r.cost?.byEndpoint.length ?? 0) > 0);
  const open = rules.find((r) => r.failMode === 'open' && keepsStateInStore(r));
  const closed = rules.find((r) => r.failMode === 'closed' && keepsStateInStore(r));
  const authPairs = rules.filter((r) => r.tier === 'security');
  const perIdentity = authPairs.find((r) => r.identity === 'username');
  const perIp = authPairs.find((r) => r.identity === 'ip' && perIdentity && r.key?.split('}')[0] === perIdentity.key?.split('}')[0]);
  const burst = bucket ? (runBurst(bucket) ?? 0) : 0;
  const heaviest = weighted?.cost?.byEndpoint.reduce((a, b) => (b.cost > a.cost ? b : a));
  const light = weighted && heaviest ? lightCall(weighted, heaviest.endpoint) : undefined;

  const list: Scenario[] = [
    {
      id: 'burst-at-boundary',
      title: 'Burst at the limit boundary',
      ruleIds: bucket ? [bucket.id] : [],
      applicable: !!bucket,
      setup: bucket ? `One fresh identity against ${bucket.id} (burst ${burst}).` : 'No token-bucket rule in middleware.',
      steps: bucket ? [`Send ${burst} requests back to back.`, 'Send one more.'] : [],
      expected: bucket
        ? `All ${burst} pass with the remaining count falling to 0; request ${burst + 1} gets 429 with Retry-After >= 1. This holds when no token refills while the ${burst + 1} requests are sent: ${refillText(bucket)}, and each token that comes back admits one more request (${VERIFY_REFILL}).${ctx?.hybrid?.ruleIds.includes(bucket.id) ? ` Sent through the middleware across instances, the in-process buckets can admit up to ${ctx.hybrid.instances} x ${ctx.hybrid.localBurst} = ${ctx.hybrid.overAdmission} more (section 4).` : ''}`
        : 'Not applicable.',
    },
    {
      id: 'concurrent-race',
      title: 'Concurrent requests racing for the last tokens',
      ruleIds: bucket ? [bucket.id] : [],
      applicable: !!bucket,
      setup: bucket
        ? ctx?.topology === 'single'
          ? `Drain ${bucket.id} to 10 tokens left. The API runs as a single instance, so the race is between concurrent requests in that instance, each a separate call to the store.`
          : `Drain ${bucket.id} to 10 tokens left, then send from ${!ctx ? 'two or more' : ctx.instances === 2 ? 'both' : `all ${ctx.instances}`} app instances.`
        : 'No token-bucket rule in middleware.',
      steps: bucket
        ? [
            ctx?.topology === 'single'
              ? 'Fire 200 requests for the same identity at once.'
              : 'Fire 200 requests for the same identity at once, spread over the instances.',
          ]
        : [],
      expected: bucket ? raceExpectation(bucket, ctx) : 'Not applicable.',
    },
    {
      id: 'store-outage',
      title: 'Store outage in both fail modes',
      ruleIds: [open?.id, closed?.id].filter((x): x is string => !!x),
      applicable: !!(open || closed),
      setup:
        open || closed
          ? 'Stop the store (or block its port) while traffic flows.'
          : rules.length > 0 && rules.every((r) => r.layer === 'edge')
            ? 'No rule runs in the application, so there is no limiter store to stop: the gateway counts every rule (the fail mode per endpoint class says what a count the gateway nodes share does when it cannot be reached).'
            : 'No rule keeps its state in a shared store (each process holds its own counters): there is no store to lose.',
      steps: [
        ...(open ? [`Call an endpoint under ${open.id} (fails open).`] : []),
        ...(closed ? [`Call an endpoint under ${closed.id} (fails closed).`] : []),
        'Restore the store and repeat.',
      ],
      expected: `${open ? (ctx?.fallback?.ruleIds.includes(open.id) ? `${open.id}: decided by the memory fallback in each instance (admitted while its in-memory count allows, then 429), nothing admitted unchecked, so no fail-open event; ratelimit_store_failures_total increases and the store-failure alert fires. ` : `${open.id}: admitted, ratelimit_fail_open_events_total increases and the fail-open alert fires. `) : ''}${closed ? `${closed.id}: 503 with Retry-After, never a silent pass. ` : ''}After the store returns, limits apply again without a restart.`,
    },
    {
      id: 'throttled-recovery',
      title: 'Throttled client recovers after Retry-After',
      ruleIds: bucket ? [bucket.id] : [],
      applicable: !!bucket,
      setup: bucket ? `Exhaust ${bucket.id} for one identity.` : 'No token-bucket rule in middleware.',
      steps: bucket ? ['Read Retry-After from the 429.', 'Wait exactly that long, then send one request.'] : [],
      expected: bucket ? recoveryExpectation(bucket) : 'Not applicable.',
    },
    {
      id: 'dual-key-auth',
      title: 'Dual-key auth limits',
      ruleIds: perIdentity && perIp ? [perIdentity.id, perIp.id] : authPairs.map((r) => r.id),
      applicable: !!(perIdentity && perIp),
      setup:
        perIdentity && perIp
          ? `Auth rules ${perIdentity.id} (${perIdentity.rate?.requests} per identity) and ${perIp.id} (${perIp.rate?.requests} per IP).`
          : 'The design has no auth endpoints.',
      steps:
        perIdentity && perIp
          ? [
              `From many client IPs, try one username ${(perIdentity.rate?.requests ?? 0) + 1} times.`,
              `From one client IP, try ${(perIp.rate?.requests ?? 0) + 1} different usernames.`,
              'Repeat the second step with a forged X-Forwarded-For on every request.',
            ]
          : [],
      expected:
        perIdentity && perIp
          ? `The first is stopped by ${perIdentity.id}, the second by ${perIp.id}, the third as well: the forged header does not change the client IP. Neither 429 carries remaining-count headers.`
          : 'Not applicable.',
    },
    {
      id: 'cost-weighted-exhaustion',
      title: 'Cost-weighted exhaustion',
      ruleIds: weighted ? [weighted.id] : [],
      applicable: !!(weighted && heaviest),
      setup:
        weighted && heaviest
          ? `${weighted.id} with burst ${runBurst(weighted)}; ${heaviest.endpoint} costs ${heaviest.cost} tokens.`
          : rules.some((r) => r.edgeCost !== undefined)
            ? `No bucket weighs calls by cost: the endpoints that cost more than 1 are counted at the edge, in requests, by ${rules
                .filter((r) => r.edgeCost !== undefined)
                .map((r) => r.id)
                .join(', ')} (the gateway's own limiter, which rl-design verify does not run).`
            : 'No endpoint carries a weight above 1.',
      steps:
        weighted && heaviest
          ? [
              `Call ${heaviest.endpoint} until refused.`,
              ...(light === undefined
                ? []
                : [
                    light.cost === 1
                      ? `Then call ${light.endpoint ?? 'a cost-1 endpoint'}${light.endpoint ? ' (cost 1)' : ''}.`
                      : `Then call ${light.endpoint} (cost ${light.cost}), the cheapest endpoint of this rule.`,
                  ]),
            ]
          : [],
      expected:
        weighted && heaviest
          ? costExpectation(weighted, runBurst(weighted) as number, heaviest.endpoint, heaviest.cost, light)
          : 'Not applicable.',
    },
  ];
  return list;
}
