// rl-design 0.1.0 runtime, copied verbatim from the rl-design package. Do not edit: generate again.
/**
 * prom-client metrics under the design's metric names, counted in plain fields on the
 * request path and handed to prom-client when it collects.
 */
import { Counter } from 'prom-client';
import type { Histogram, Registry } from 'prom-client';
import type { DesignData, MetricSpec, RuleSpec } from './types.js';

/** A counter series bound to its label values once: inc() is all a request pays. */
export interface CounterCell {
  inc(): void;
}

/**
 * A count waiting to be handed to prom-client. prom-client validates and hashes the labels
 * on every inc(), which would cost more than the rest of a decision; each series is counted
 * in a plain field here instead, and added to the prom-client counter when it is collected
 * (at every scrape, and by metric.get()).
 */
class PendingCell implements CounterCell {
  n = 0;
  readonly labels: Record<string, string>;

  constructor(labels: Record<string, string>) {
    this.labels = labels;
  }

  inc(): void {
    this.n++;
  }
}

/** A series of a counter someone else registered under the design's name: counted into directly. */
class DirectCell implements CounterCell {
  private readonly counter: Counter<string>;
  private readonly labels: Record<string, string>;

  constructor(counter: Counter<string>, labels: Record<string, string>) {
    this.counter = counter;
    this.labels = labels;
    // the series exists at 0 from the start (see counterFor)
    counter.inc(labels, 0);
  }

  inc(): void {
    this.counter.inc(this.labels);
  }
}

const NO_CELL: CounterCell = { inc: () => undefined };

function labelsOf(names: readonly string[], values: readonly string[]): Record<string, string> {
  const labels: Record<string, string> = {};
  names.forEach((name, i) => (labels[name] = values[i] ?? ''));
  return labels;
}

/** Pending cells per registry and metric name, so several limiters on one registry add up. */
const sinks = new WeakMap<Registry, Map<string, Map<string, PendingCell>>>();

/**
 * The cell of one series of a counter (call it once per series, not per request). Every cell
 * is exported from the first collection on, at 0 until it counts: a series that appeared only
 * with its first event would make that event invisible to rate() and increase() (nothing to
 * compare it with), so a single fail-open after a restart would never page. The label values
 * come from the design (rule ids, outcomes, plans), never from a request, so the series are
 * bounded: rules x outcomes.
 */
function counterFor(registry: Registry, spec: MetricSpec, labelNames: readonly string[]): (values: readonly string[]) => CounterCell {
  let byName = sinks.get(registry);
  if (!byName) {
    byName = new Map();
    sinks.set(registry, byName);
  }
  let pending = byName.get(spec.name);
  const existing = registry.getSingleMetric(spec.name) as Counter<string> | undefined;
  if (!pending && existing) return (values) => new DirectCell(existing, labelsOf(labelNames, values));
  if (!pending) {
    const cells = new Map<string, PendingCell>();
    pending = cells;
    byName.set(spec.name, cells);
    new Counter({
      name: spec.name,
      help: spec.help,
      labelNames: labelNames.slice(),
      registers: [registry],
      collect() {
        for (const cell of cells.values()) {
          // inc(labels, 0) creates the series at 0, as prom-client users pre-initialise them
          this.inc(cell.labels, cell.n);
          cell.n = 0;
        }
      },
    });
  }
  const cells = pending;
  return (values) => {
    const id = values.join('\u0000');
    let cell = cells.get(id);
    if (!cell) {
      cell = new PendingCell(labelsOf(labelNames, values));
      cells.set(id, cell);
    }
    return cell;
  };
}

export interface LatencyObserver {
  observe(ms: number): void;
}

const LATENCY_BUCKETS: readonly number[] = [0.25, 0.5, 1, 2, 5, 10, 25, 50, 100];

/** One series of the latency histogram: a count per bucket (the last one: above every bound), sum, count. */
class LatencySeries implements LatencyObserver {
  readonly labels: Record<string, string>;
  readonly counts: number[] = new Array<number>(LATENCY_BUCKETS.length + 1).fill(0);
  sum = 0;
  count = 0;

  constructor(labels: Record<string, string>) {
    this.labels = labels;
  }

  observe(ms: number): void {
    let i = 0;
    while (i < LATENCY_BUCKETS.length && ms > (LATENCY_BUCKETS[i] as number)) i++;
    this.counts[i] = (this.counts[i] as number) + 1;
    this.sum += ms;
    this.count++;
  }
}

interface HistogramValue {
  labels: Record<string, string | number>;
  value: number;
  metricName: string;
}

/**
 * The store-latency histogram, with the series of a prom-client histogram
 * (<name>_bucket{le, script}, <name>_sum, <name>_count). prom-client's own Histogram
 * validates and hashes the labels and finds the bucket through an object keyed by the bound
 * as a string on every observe(), which costs more than the rest of a decision; this one
 * counts into plain arrays and builds the series only when the registry collects it. It is
 * registered in the registry like any prom-client metric (get(), reset()), and several
 * limiters on one registry share it.
 */
class LatencyHistogram {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly labelNames: readonly string[] = ['script'];
  private readonly series = new Map<string, LatencySeries>();

  constructor(name: string, help: string) {
    this.name = name;
    this.help = help;
  }

  labels(script: string): LatencySeries {
    let series = this.series.get(script);
    if (!series) {
      series = new LatencySeries({ script });
      this.series.set(script, series);
    }
    return series;
  }

  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: HistogramValue[] }> {
    const values: HistogramValue[] = [];
    for (const s of this.series.values()) {
      if (s.count === 0) continue;
      let cumulative = 0;
      LATENCY_BUCKETS.forEach((le, i) => {
        cumulative += s.counts[i] as number;
        values.push({ labels: { le, ...s.labels }, value: cumulative, metricName: this.name + '_bucket' });
      });
      values.push({ labels: { le: '+Inf', ...s.labels }, value: s.count, metricName: this.name + '_bucket' });
      values.push({ labels: { ...s.labels }, value: s.sum, metricName: this.name + '_sum' });
      values.push({ labels: { ...s.labels }, value: s.count, metricName: this.name + '_count' });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    for (const s of this.series.values()) {
      s.counts.fill(0);
      s.sum = 0;
      s.count = 0;
    }
  }
}

/** The latency series of one script (call it once per script, not per request). */
function latencyFor(registry: Registry, spec: MetricSpec): (script: string) => LatencyObserver {
  const existing: unknown = registry.getSingleMetric(spec.name);
  if (existing instanceof LatencyHistogram) return (script) => existing.labels(script);
  // a histogram someone else registered under the design's name (prom-client's, or another core's)
  if (existing) return (script) => (existing as Histogram<string>).labels(script);
  const histogram = new LatencyHistogram(spec.name, spec.help);
  // prom-client's types only name its own classes; the registry needs name, get() and reset()
  registry.registerMetric(histogram as unknown as Histogram<string>);
  return (script) => histogram.labels(script);
}

/** The counters of one rule, bound once when the limiter is created. */
export interface RuleMetrics {
  /** ratelimit_decisions_total{result=allowed | throttled | shadow_throttled} */
  readonly allowed: CounterCell;
  readonly throttled: CounterCell;
  readonly shadowThrottled: CounterCell;
  /** ratelimit_throttled_total{mode=enforce | shadow} */
  readonly throttledEnforce: CounterCell;
  readonly throttledShadow: CounterCell;
  readonly failOpen: CounterCell;
  readonly failures: Readonly<Record<'timeout' | 'connection' | 'script', CounterCell>>;
  /** ratelimit_near_limit_total: admitted with fewer than nearBelow units left. */
  readonly nearLimit: CounterCell;
  readonly nearBelow: number;
}

/**
 * An admitted decision is near the limit when it leaves fewer than this share of the rule's
 * capacity (its burst, or the window's limit): the design's RateLimitNearLimit alert divides
 * ratelimit_near_limit_total by the allowed decisions.
 */
const NEAR_LIMIT_FRACTION = 0.2;

function nearBelow(spec: RuleSpec): number {
  return NEAR_LIMIT_FRACTION * (spec.burst ?? spec.limit);
}

/**
 * ratelimit_access_total{outcome}: requests refused by the deny list (denied) or by the penalty
 * box (penalty_box), and requests the allowlist let skip rules (allowlisted). One series per
 * list the design has; the outcome is the only label (an access refusal names no rule).
 */
/** The outcome label of ratelimit_access_total, by the access list that decides it. */
export const ACCESS_OUTCOMES = { deny: 'denied', penalty: 'penalty_box', allow: 'allowlisted' } as const;

export interface AccessMetrics {
  readonly denied: CounterCell;
  readonly penaltyBox: CounterCell;
  readonly allowlisted: CounterCell;
}

export interface Metrics {
  rule(spec: RuleSpec): RuleMetrics;
  readonly access: AccessMetrics;
  quotaExhausted(rule: string, plan: string): void;
  latency(script: string): LatencyObserver;
}

const NO_LATENCY: LatencyObserver = { observe: () => undefined };

const NO_ACCESS: AccessMetrics = { denied: NO_CELL, penaltyBox: NO_CELL, allowlisted: NO_CELL };

const NO_METRICS: Metrics = {
  rule: () => ({
    nearLimit: NO_CELL,
    nearBelow: 0,
    allowed: NO_CELL,
    throttled: NO_CELL,
    shadowThrottled: NO_CELL,
    throttledEnforce: NO_CELL,
    throttledShadow: NO_CELL,
    failOpen: NO_CELL,
    failures: { timeout: NO_CELL, connection: NO_CELL, script: NO_CELL },
  }),
  access: NO_ACCESS,
  quotaExhausted: () => undefined,
  latency: () => NO_LATENCY,
};

/** The access counter's series: one per list the design has, each at 0 from the start. */
function accessMetrics(lists: DesignData['access'], cell: ((values: readonly string[]) => CounterCell) | null): AccessMetrics {
  if (!lists || cell === null) return NO_ACCESS;
  return {
    denied: lists.deny !== null ? cell([ACCESS_OUTCOMES.deny]) : NO_CELL,
    penaltyBox: lists.penalty !== null ? cell([ACCESS_OUTCOMES.penalty]) : NO_CELL,
    allowlisted: lists.allow !== null ? cell([ACCESS_OUTCOMES.allow]) : NO_CELL,
  };
}

export function createMetrics(design: DesignData, registry: Registry | null): Metrics {
  if (registry === null) return NO_METRICS;
  const METRICS = design.metrics;
  const decisions = counterFor(registry, METRICS.decisions, ['rule', 'result']);
  const throttled = counterFor(registry, METRICS.throttled, ['rule', 'mode']);
  const failures = counterFor(registry, METRICS.failures, ['rule', 'reason']);
  const failOpen = counterFor(registry, METRICS.failOpen, ['rule']);
  const nearLimit = counterFor(registry, METRICS.nearLimit, ['rule']);
  const quota = METRICS.quotaExhausted ? counterFor(registry, METRICS.quotaExhausted, ['rule', 'plan']) : null;
  const access = METRICS.access ? counterFor(registry, METRICS.access, ['outcome']) : null;
  // the plan label: a plan of the design, else '' (never free text from a request)
  const planLabel = (plan: string): string => (design.plans.indexOf(plan) >= 0 ? plan : '');
  if (quota) {
    for (const r of design.rules) if (r.tier === 'quota') quota([r.id, planLabel(r.plan ?? '')]);
  }
  return {
    rule: (spec) => ({
      nearLimit: nearLimit([spec.id]),
      nearBelow: nearBelow(spec),
      allowed: decisions([spec.id, 'allowed']),
      throttled: decisions([spec.id, 'throttled']),
      shadowThrottled: decisions([spec.id, 'shadow_throttled']),
      throttledEnforce: throttled([spec.id, 'enforce']),
      throttledShadow: throttled([spec.id, 'shadow']),
      failOpen: failOpen([spec.id]),
      failures: {
        timeout: failures([spec.id, 'timeout']),
        connection: failures([spec.id, 'connection']),
        script: failures([spec.id, 'script']),
      },
    }),
    access: accessMetrics(design.access, access),
    quotaExhausted: (rule, plan) => quota?.([rule, planLabel(plan)]).inc(),
    latency: latencyFor(registry, METRICS.latency),
  };
}
