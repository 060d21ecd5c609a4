/** What verify produces: one result per (rule, scenario), and the report around them. */
import type { ScenarioId, WorstCaseMeasurement } from '../design/model.js';
import type { ConfigCheck } from './config.js';
import type { Latency } from './stats.js';

/**
 * The design's six scenarios, plus the TTL check verify runs on every key it wrote and the
 * measured rows of the worst-case table.
 */
export type VerifyScenarioId = ScenarioId | 'key-ttl' | 'worst-case';

export const SCENARIO_ORDER: readonly VerifyScenarioId[] = [
  'burst-at-boundary',
  'concurrent-race',
  'cost-weighted-exhaustion',
  'dual-key-auth',
  'throttled-recovery',
  'worst-case',
  'key-ttl',
  'store-outage',
];

export const SCENARIO_TITLES: Record<VerifyScenarioId, string> = {
  'burst-at-boundary': 'burst at the boundary',
  'concurrent-race': 'race for the last tokens',
  'cost-weighted-exhaustion': 'cost-weighted exhaustion',
  'dual-key-auth': 'dual-key auth',
  'throttled-recovery': 'throttled-client recovery',
  'worst-case': 'worst case in a period',
  'key-ttl': 'TTL on every key',
  'store-outage': 'store outage',
};

export interface ScenarioResult {
  /** The rule the scenario ran for. */
  ruleId: string;
  /** Every rule involved (dual-key auth: both rows). */
  ruleIds: string[];
  scenario: VerifyScenarioId;
  status: 'passed' | 'failed' | 'skipped';
  /** What should happen, short: "25 admitted, #26 refused". */
  expected: string;
  /** What happened, short: "25 admitted, #26 refused (Retry-After 5000 ms)". */
  measured: string;
  /** One or two sentences for the document: parameters, scaling, failure reason. */
  detail: string;
  /** The measured numbers, for machines (admitted, expected, refused, ...). */
  numbers?: Record<string, number>;
  /** The parameters the scripts ran with, and how they were scaled from the rule's. */
  params?: string;
  scaling?: string;
  /** Latency of the limiter calls of this scenario. */
  latency?: Latency;
  durationMs: number;
  /** worst-case: each row measured, beside the stated worst case for the numbers run. */
  measurements?: WorstCaseMeasurement[];
}

export interface RuleSummary {
  ruleId: string;
  title: string;
  algorithm?: string;
  layer?: string;
  failMode?: string;
  key?: string;
  /** The script verify ran for it. */
  script?: string;
  verifiable: boolean;
  /** Why not, when not verifiable. */
  reason?: string;
}

export interface ServerSummary {
  product: 'Redis' | 'Valkey';
  version: string;
  redisVersion: string;
  mode: 'standalone' | 'cluster' | 'sentinel';
  role: 'master' | 'replica';
  maxmemoryPolicy?: string;
  /** Started by rl-design for this run (so the outage scenario could stop it). */
  spawned: boolean;
  /** Where it was (no password). */
  address: string;
}

export interface VerifyReport {
  tool: 'rl-design';
  toolVersion: string;
  /** YYYY-MM-DD of the run. */
  date: string;
  project: string;
  /** True when nothing failed: every scenario that ran passed and no server check failed. */
  passed: boolean;
  server: ServerSummary;
  checks: ConfigCheck[];
  /** The key prefix of this run; every key written was under it, and was deleted. */
  keyPrefix: string;
  keysDeleted: number;
  rules: RuleSummary[];
  results: ScenarioResult[];
  /** Limiter calls made one at a time (the races, which measure queueing, left out). */
  latency?: Latency;
  counts: { passed: number; failed: number; skipped: number };
}
