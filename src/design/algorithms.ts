/** Algorithm decisions: one per class of limit present in the matrix, with the trade-off stated. */
import type { Algorithm, AlgorithmDecision, MatrixRule, RuleTier } from './model.js';

interface Reasoning {
  why: string;
  tradeoff: string;
  alternatives: { algorithm: Algorithm; whyNot: string }[];
}

const REASONS: Record<string, Reasoning> = {
  'fairness:gcra': {
    why: 'Request limits need rate plus burst, which is exactly how clients behave: idle clients save up a burst, busy ones are held to the sustained rate. GCRA is the token bucket written as one time (the theoretical arrival time), kept in the expiry of one small key, so a decision reads and writes that key without reading the clock (a request far past the limit is refused from the TTL of the key alone), and cost weighting is a multiplication.',
    tradeoff:
      "A full bucket admits a whole burst at once, so the instantaneous rate can briefly reach burst/1 s; that is the point of the burst and is sized per rule. The state is the key's expiry: decisions run on Redis's millisecond expiry clock, and anything else that changes the TTL of a bucket key changes its limit.",
    alternatives: [
      {
        algorithm: 'token-bucket',
        whyNot:
          'Same behaviour, but the textbook form keeps fractional tokens plus a timestamp in a hash: measured on Redis 7.0 it takes about 1.7x the CPU of an admission, 4x on a key hammered past its limit, and 182 bytes per key against 117.',
      },
      {
        algorithm: 'sliding-window-counter',
        whyNot:
          'Approximates a window well but has no notion of burst, so it either rejects legitimate bursts or admits twice the rate at boundaries.',
      },
      { algorithm: 'fixed-window', whyNot: 'Admits up to twice the limit across a window boundary: wrong for short windows.' },
    ],
  },
  'ceiling:gcra': {
    why: 'The ceiling is a request rate with a burst allowance, so it uses the same GCRA bucket as the fairness limits, on one deployment-wide key.',
    tradeoff:
      'One hot key; at the stated ceiling Redis serves it easily, and a local hybrid bucket can absorb micro-bursts when the rate grows.',
    alternatives: [{ algorithm: 'fixed-window', whyNot: 'Boundary double-bursts defeat the purpose of a protective ceiling.' }],
  },
  'security:sliding-window-log': {
    why: 'Brute-force limits must be exact: "10 attempts in any 15 minutes" must mean 10, not 20 across a window boundary. Legitimate auth volume is low, and each key holds at most its small limit of entries, so storing one sorted-set entry per attempt is affordable (the memory estimate bounds the keys an attack can create).',
    tradeoff: 'Memory grows with the limit (one entry per attempt per key), bounded by the small limits and the window-length TTL.',
    alternatives: [
      { algorithm: 'fixed-window', whyNot: 'An attacker who times attempts around the boundary gets double the attempts.' },
      { algorithm: 'sliding-window-counter', whyNot: 'Cheaper, but an approximation; exactness is worth the memory at auth volumes.' },
      {
        algorithm: 'gcra',
        whyNot: 'Burst semantics suit traffic, not attempt counting: a saved-up bucket would allow a burst of guesses.',
      },
    ],
  },
  'quota:fixed-window': {
    why: 'Long-period business quotas (per day or month) are windows by definition, with a reset moment customers can read on an invoice; one integer counter per window is cheapest.',
    tradeoff: 'A boundary burst is possible but negligible against a day or a month of traffic.',
    alternatives: [{ algorithm: 'sliding-window-log', whyNot: 'One entry per call for a month is far too much memory.' }],
  },
  'quota:fixed-window:rolling': {
    why: 'A rolling quota has no reset moment: what counts is the usage of the last N days. One counter per UTC day, summed over the window, gives that with N small integers per identity instead of one entry per call.',
    tradeoff:
      'Usage ages out a whole day at a time, at 00:00 UTC, so a client refused at the quota waits for the oldest day of its window to drop out, up to a day after the call that would have aged out exactly.',
    alternatives: [
      { algorithm: 'sliding-window-log', whyNot: 'Exact to the millisecond, but one entry per call for a month is far too much memory.' },
      {
        algorithm: 'fixed-window',
        whyNot:
          'A calendar window resets all at once: a client could spend the whole quota twice across the reset, which a rolling quota exists to prevent.',
      },
    ],
  },
  'outbound:gcra': {
    why: "A provider's documented limit is a rate; a GCRA bucket can reserve the next free slot and tell the caller how long to wait, so work queues instead of failing.",
    tradeoff:
      'Waiting adds latency to outbound calls under load; the bucket runs below the documented limit, leaving some provider capacity unused.',
    alternatives: [
      { algorithm: 'fixed-window', whyNot: 'Bursts at window boundaries are exactly what providers punish with 429s or bans.' },
    ],
  },
};

/**
 * The same choices where the state is kept in the process (no store): what the store-backed
 * text says about keys, expiries and Redis is not true there.
 */
const IN_PROCESS_REASONS: Record<string, Partial<Reasoning>> = {
  'fairness:gcra': {
    why: 'Request limits need rate plus burst, which is exactly how clients behave: idle clients save up a burst, busy ones are held to the sustained rate. GCRA is the token bucket written as one time per identity (the theoretical arrival time), held in the process, so a decision is one comparison and one write, and cost weighting is a multiplication.',
    tradeoff:
      'A full bucket admits a whole burst at once, so the instantaneous rate can briefly reach burst/1 s; that is the point of the burst and is sized per rule. The buckets live in the process: a restart empties them, so every caller starts again with a full bucket.',
    alternatives: [
      {
        algorithm: 'token-bucket',
        whyNot:
          'Same behaviour, but the textbook form keeps fractional tokens plus a timestamp per identity and refills them on every decision; GCRA keeps one number.',
      },
      ...(REASONS['fairness:gcra']?.alternatives.filter((a) => a.algorithm !== 'token-bucket') ?? []),
    ],
  },
  'ceiling:gcra': {
    why: 'The ceiling is a request rate with a burst allowance, so it uses the same GCRA bucket as the fairness limits, one bucket for the whole process.',
    tradeoff: 'One bucket every request passes through; a restart starts it full.',
  },
  'security:sliding-window-log': {
    why: 'Brute-force limits must be exact: "10 attempts in any 15 minutes" must mean 10, not 20 across a window boundary. Legitimate auth volume is low, and each log holds at most its small limit of attempts, so keeping one timestamp per attempt is affordable (the memory estimate bounds the logs an attack can create).',
  },
};

const EDGE_REASON: Reasoning = {
  why: "The gateway's own limiter is the cheapest place to reject and protects the application itself; its native algorithm is used as it is.",
  tradeoff:
    'Edge counters see coarse identity only (address, header), so only coarse limits run there; the rule details say whether each counts in every edge node or once for all of them.',
  alternatives: [],
};

/** The name a rule's algorithm is shown with when the enum value alone would mislead (a rolling quota is not a fixed window). */
export function algorithmLabel(rule: Pick<MatrixRule, 'tier' | 'algorithm' | 'rate'>): string | undefined {
  if (rule.tier === 'quota' && rule.algorithm === 'fixed-window' && rule.rate?.periodText?.startsWith('rolling')) {
    return 'rolling window of daily counters';
  }
  return undefined;
}

/**
 * The Lua script that runs a rule's algorithm on the store (the in-process store runs the same
 * algorithm): the two windows as themselves, every other algorithm (token and leaky bucket,
 * sliding window counter, GCRA) as GCRA.
 */
export function luaScriptFor(algorithm: MatrixRule['algorithm']): 'gcra' | 'sliding-window-log' | 'fixed-window' {
  return algorithm === 'sliding-window-log' || algorithm === 'fixed-window' ? algorithm : 'gcra';
}

/**
 * The burst the shipped code runs a rule with: the capacity of the GCRA bucket the middleware
 * compiles in, the headers and bodies the document shows, and the worst case it states, all
 * read it here. The stated burst, or (none stated) the rate's count per period; whole tokens,
 * at least 1. Null for a rule the store counts in a window, or without a rate. Edge rules run
 * on the gateway's own algorithm with the burst as stated, not this.
 */
export function runBurst(rule: Pick<MatrixRule, 'algorithm' | 'burst' | 'rate'>): number | null {
  if (luaScriptFor(rule.algorithm) !== 'gcra' || !rule.rate) return null;
  return Math.max(1, Math.round(typeof rule.burst === 'number' ? rule.burst : rule.rate.requests));
}

/**
 * The most one key of a rule admits within any stretch of `seconds` at one counter (where its
 * counter lives, per node or per instance, is the caller's concern), in whole requests of cost 1.
 * A rule the application runs (any layer but the edge) is counted by the scripts: every
 * algorithm but the two windows as a GCRA bucket with the burst runBurst gives, so the burst at
 * once and then the refill. An edge rule by the gateway's own algorithm: a bucket its stated
 * burst and then its rate; a sliding log exactly its limit per trailing period; a fixed window
 * and a sliding window counter the limit in every window the stretch touches, one more than it
 * spans (the end of one window and the start of the next; a counter weighs the previous window
 * as if spread evenly, so when that window's requests came at its very end nearly the limit
 * passes again within one period). Over one period: the worst-case table's figure. Undefined
 * without a rate.
 */
export function admittedWithin(rule: Pick<MatrixRule, 'algorithm' | 'burst' | 'rate' | 'layer'>, seconds: number): number | undefined {
  if (!rule.rate || !(rule.rate.periodSeconds > 0)) return undefined;
  const { requests, periodSeconds } = rule.rate;
  const whole = (x: number): number => Math.floor(x + 1e-9);
  const run = rule.layer === 'edge' ? null : runBurst(rule);
  if (run !== null) return whole(run + (requests / periodSeconds) * seconds);
  // the windows a stretch of `seconds` spans, rounding noise aside
  const spans = Math.max(1, Math.ceil(seconds / periodSeconds - 1e-9));
  switch (rule.algorithm) {
    case 'sliding-window-log':
      return whole(requests * spans);
    case 'fixed-window':
    case 'sliding-window-counter':
      return whole(requests * (spans + 1));
    default:
      return whole((typeof rule.burst === 'number' ? rule.burst : 0) + (requests / periodSeconds) * seconds);
  }
}

/**
 * What nginx's limit_req lets one key through at one node within any stretch of `seconds`, both
 * ends counted as admittedWithin counts a bucket's refill: the request that finds the key's state
 * empty, `burst` more at once (nginx's burst counts the excess over that request, nodelay), then
 * one per emission interval at the rate. A real nginx at rate=10r/s burst=20 passes 21 of 40 sent
 * at once and the 31st one second after the first (test/codegen/existing-nginx-limiters.test.ts).
 */
export function limitReqAdmittedWithin(rate: { requests: number; periodSeconds: number }, burst: number, seconds: number): number {
  return Math.floor(1 + burst + (rate.requests / rate.periodSeconds) * seconds + 1e-9);
}

const RUN_AS_GCRA: Partial<Record<Algorithm, string>> = {
  'token-bucket': 'token bucket, run as GCRA',
  'leaky-bucket': 'leaky bucket, run as GCRA',
  'sliding-window-counter': 'sliding window counter, run as GCRA',
};

/** What a rule the application runs is called when its algorithm runs as GCRA ("sliding window counter, run as GCRA"). */
export function runAsGcraLabel(rule: Pick<MatrixRule, 'algorithm' | 'layer'>): string | undefined {
  return rule.layer === 'edge' || rule.algorithm === undefined ? undefined : RUN_AS_GCRA[rule.algorithm];
}

const ORDER: RuleTier[] = ['ceiling', 'fairness', 'security', 'quota', 'outbound'];

export function buildAlgorithms(rules: MatrixRule[]): AlgorithmDecision[] {
  const groups = new Map<
    string,
    { tier: RuleTier; algorithm: Algorithm; ids: string[]; edge: boolean; inProcess: boolean; label?: string }
  >();
  for (const r of rules) {
    if (!r.algorithm) continue;
    const label = algorithmLabel(r);
    const key = `${r.tier}:${r.algorithm}${label ? ':rolling' : ''}`;
    const g = groups.get(key) ?? {
      tier: r.tier,
      algorithm: r.algorithm,
      ids: [],
      edge: r.layer === 'edge',
      inProcess: true,
      ...(label ? { label } : {}),
    };
    g.ids.push(r.id);
    // every rule of the group keeps its state in the process (none in a store or a gateway)
    if (r.primitive !== 'in-process') g.inProcess = false;
    groups.set(key, g);
  }
  return [...groups.entries()]
    .sort(([, a], [, b]) => ORDER.indexOf(a.tier) - ORDER.indexOf(b.tier) || a.algorithm.localeCompare(b.algorithm))
    .map(([key, g]) => {
      const stored = REASONS[key];
      const reasoning = (stored && g.inProcess ? { ...stored, ...IN_PROCESS_REASONS[key] } : stored) ??
        (g.edge ? EDGE_REASON : undefined) ?? {
          why: `Chosen in a hand-written rule (${g.algorithm}).`,
          tradeoff: 'Not assessed by rl-design: review it against the default for this class of limit.',
          alternatives: [],
        };
      return { limitClass: g.tier, algorithm: g.algorithm, ...(g.label ? { label: g.label } : {}), ruleIds: g.ids, ...reasoning };
    });
}
