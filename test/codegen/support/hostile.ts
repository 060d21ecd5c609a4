/**
 * A design built from answers full of hostile strings: quotes, semicolons, braces, `$`, `#`,
 * comment closers, Lua long-bracket closers, newlines, template openers, `__proto__`. Every
 * generated file must stay well formed and inert with it.
 */
import { Answers } from '../../../src/answers/schema.js';
import { buildDesign } from '../../../src/design/build.js';
import type { Design, MatrixRule } from '../../../src/design/model.js';

/** The nastiest one-liner: closes strings, blocks and comments in every target. */
export const EVIL = `x"; } evil { $host #'*/ ]] <script>\`\${1}|\\ {{ .x }}`;

/** An anonymous route made of regex and config metacharacters, reachable over HTTP as is. */
export const META_ROUTE = '/v1/a.b$c(d)+';
/** A route that cannot be requested verbatim, but must still become an inert config string. */
export const EVIL_ROUTE = `/v1/"q";{x}$y#z*/]]'\n\\/:id`;
export const HEALTH_ROUTE = '/health$z';

/**
 * A documentation URL (a valid http(s) URL to the answers schema) made of what the gateways'
 * languages read in a 429 body's text: nginx variables and `;` `{}` `"`, API Gateway's `$`
 * references and VTL's `#set` / `##`, Envoy's %COMMAND% and a bare `%`, a quote and a backslash.
 */
export const TEMPLATE_DOCS_URL = `https://docs.example/limits/$request_uri/\${stageVariables.x}/$context.requestId/%RESPONSE_CODE%/50%off;{a}"q"'s\\b#set($d = 1)##c`;

export function hostileAnswers(overrides: Record<string, unknown> = {}): Answers {
  return Answers.parse({
    project: { name: `Evil "proj"; } {\n$x #*/ ]] <script>`, description: EVIL },
    output: { format: 'markdown', layout: 'single' },
    goals: ['overload', 'abuse', 'fairness'],
    stack: {
      language: 'TypeScript',
      framework: 'express',
      topology: 'horizontal',
      instances: 2,
      gateway: 'nginx',
      store: 'redis',
      trustedProxies: ['127.0.0.1/32', '::1'],
    },
    identities: ['api-key', 'ip'],
    endpoints: [
      { name: `cat"; {evil}`, method: 'GET', route: META_ROUTE, class: 'read', anonymous: true },
      { name: EVIL, method: 'POST', route: EVIL_ROUTE, class: 'read', anonymous: true },
      { name: 'health"{', method: 'GET', route: HEALTH_ROUTE, class: 'health', anonymous: true },
      { name: 'orders', method: 'POST', route: '/v1/orders', class: 'write' },
    ],
    traffic: { typicalRps: 50, peakRps: 100 },
    outbound: [
      { name: '__proto__', limit: { requests: 20, per: 'second' }, safetyFraction: 1, burst: 2 },
      { name: EVIL, limit: { requests: 600, per: 'minute' } },
      // kept in each process: exercises the client's in-process twin of the Lua bucket
      { name: 'local-only', limit: { requests: 20, per: 'second' }, safetyFraction: 1, burst: 2, bucket: 'per-instance' },
    ],
    headers: { docsUrl: `https://docs.example/rate$limits/%RESPONSE_CODE%/50%;$request_uri?a='b'&c={{x}}#"}##x` },
    ...overrides,
  });
}

/** The hostile design, plus a hand-made edge rule keyed on an API key with a hostile id. */
export function hostileDesign(): Design {
  const design = buildDesign(hostileAnswers(), { date: '2026-12-02' });
  const extra: MatrixRule = {
    id: `k"; } {$x}#*/`,
    source: 'hand-written',
    tier: 'fairness',
    title: EVIL,
    endpointClass: 'write',
    endpoints: ['orders'],
    routes: [{ method: 'POST', route: '/v1/orders' }],
    identity: 'api-key',
    algorithm: 'leaky-bucket',
    primitive: 'gateway-native',
    key: 'edge:api-key',
    rate: { requests: 10, periodSeconds: 1 },
    burst: 20,
    cost: { default: 1, byEndpoint: [] },
    failMode: 'closed',
    layer: 'edge',
    ttlSeconds: 60,
    cardinality: { bound: 5000, basis: EVIL },
    headers: 'full',
    errorCode: 'RATE_LIMITED',
    killSwitch: { flag: `ratelimit.${EVIL}.mode` },
    rationale: EVIL,
  };
  return {
    ...design,
    rules: [...design.rules, extra],
    monitoring: {
      ...design.monitoring,
      alerts: [
        ...design.monitoring.alerts,
        {
          name: `Evil"Alert {{ .Labels }}`,
          metric: EVIL,
          condition: EVIL,
          expr: 'vector(1) > 0',
          for: '5m',
          severity: 'ticket',
          why: EVIL,
        },
      ],
    },
  };
}
