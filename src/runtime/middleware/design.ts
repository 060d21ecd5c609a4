/**
 * The design's data module. rl-design generates this file for each design (the rules, routes,
 * Lua scripts, response contract and metric names); this placeholder, a design with no rules,
 * only lets the runtime folder type-check on its own and is never shipped.
 */
import type { DesignData } from './types.js';

export const DESIGN: DesignData = {
  project: 'placeholder',
  headerConvention: 'ietf-structured',
  docsUrl: 'https://example.com/docs/rate-limits',
  trustedProxies: [],
  defaultMode: 'shadow',
  storeUnavailableRetryAfterSeconds: 5,
  quotaPeriod: null,
  hybrid: null,
  metrics: {
    decisions: { name: 'ratelimit_decisions_total', help: 'Rate-limit decisions by rule and result' },
    throttled: { name: 'ratelimit_throttled_total', help: 'Requests refused (or, in shadow mode, that would be) by rule' },
    latency: { name: 'ratelimit_check_duration_ms', help: 'Store call latency in milliseconds' },
    failures: { name: 'ratelimit_store_failures_total', help: 'Failed store calls by rule and reason' },
    failOpen: { name: 'ratelimit_fail_open_events_total', help: 'Requests admitted unchecked because the store failed' },
    nearLimit: { name: 'ratelimit_near_limit_total', help: 'Admitted requests that left under 20% of the capacity' },
    quotaExhausted: null,
  },
  plans: [],
  defaultPlan: null,
  scripts: [],
  routes: [],
  rules: [],
};
