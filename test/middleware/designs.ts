/**
 * Small designs for the middleware scenarios, built from answers like a user's, with hand
 * rules that shrink the numbers so every scenario runs in well under a second (no faked time).
 */
import type { AnswersInput } from '../../src/answers/schema.js';

export const DOCS = 'https://docs.test.example/rate-limits';

/**
 * One API-key fairness bucket (burst 12, 1/min), an anonymous per-IP bucket (burst 2,
 * 1/s), dual-key login (3 per username, 5 per IP per hour, fail closed, silent), a health
 * check, a cost-5 export. Loopback is a trusted proxy, so tests can play the proxy.
 */
export const MAIN: AnswersInput = {
  project: { name: 'middleware test API' },
  goals: ['overload', 'abuse', 'fairness'],
  stack: {
    language: 'TypeScript',
    framework: 'express',
    topology: 'single',
    gateway: 'none',
    store: 'redis',
    trustedProxies: ['127.0.0.0/8', '::1/128'],
  },
  identities: ['api-key', 'ip'],
  endpoints: [
    { name: 'list-items', method: 'GET', route: '/v1/items', class: 'read' },
    { name: 'get-item', method: 'GET', route: '/v1/items/:id', class: 'read' },
    { name: 'export', method: 'POST', route: '/v1/exports', class: 'export', cost: 5 },
    { name: 'login', method: 'POST', route: '/v1/login', class: 'auth', authKind: 'login' },
    { name: 'public', method: 'GET', route: '/v1/public', class: 'read', anonymous: true },
    { name: 'healthz', method: 'GET', route: '/healthz', class: 'health', anonymous: true },
  ],
  traffic: { typicalRps: 100, peakRps: 1000, burstiness: 'moderate' },
  failure: { byClass: { auth: 'closed', read: 'open', export: 'open' } },
  headers: { convention: 'ietf-structured', docsUrl: DOCS },
  rules: [
    { id: 'fairness-per-api-key', rate: { requests: 1, per: 'minute' }, burst: 12 },
    { id: 'anonymous-per-ip', rate: { requests: 1, per: 'second' }, burst: 2 },
    { id: 'auth-login-per-identity', rate: { requests: 3, per: 'hour' } },
    { id: 'auth-login-per-ip', rate: { requests: 5, per: 'hour' } },
  ],
};

/**
 * Plans with per-tenant fairness (burst 20) and a calendar-month quota in Europe/Berlin
 * (Free: 5 calls), on a horizontally scaled API busy enough for the local + Redis hybrid.
 */
export const PLANS: AnswersInput = {
  project: { name: 'middleware plans API' },
  goals: ['fairness', 'quotas'],
  stack: {
    language: 'TypeScript',
    framework: 'fastify',
    topology: 'horizontal',
    instances: 2,
    gateway: 'none',
    store: 'redis',
    trustedProxies: [],
  },
  identities: ['tenant', 'ip'],
  endpoints: [{ name: 'orders', method: 'GET', route: '/v1/orders', class: 'read' }],
  traffic: { typicalRps: 800, peakRps: 2000, burstiness: 'moderate' },
  plans: [
    { name: 'Free', rate: { requests: 1, per: 'minute' }, burst: 20, quota: 5 },
    { name: 'Pro', rate: { requests: 1, per: 'minute' }, burst: 20, quota: 100000 },
  ],
  quotas: {
    reset: { kind: 'calendar', period: 'month', timeZone: 'Europe/Berlin' },
    exhaustion: 'hard',
    billingSource: 'metering-system',
  },
  headers: { convention: 'x-ratelimit', docsUrl: DOCS },
};

/** PLANS with a rolling 30-day quota (Free: 5 calls), kept beside the tenant's fairness bucket in its hash. */
export const ROLLING: AnswersInput = {
  ...PLANS,
  project: { name: 'middleware rolling quota API' },
  quotas: { reset: { kind: 'rolling', days: 30 }, exhaustion: 'hard', billingSource: 'metering-system' },
};

/**
 * PLANS without quotas: per-tenant fairness is then the tenant's only limit, kept in a key of
 * its own with the local + Redis hybrid in front (a tenant with a quota too keeps both in one
 * hash, checked in one call, and has no local bucket).
 */
export const HYBRID: AnswersInput = {
  ...PLANS,
  project: { name: 'middleware hybrid API' },
  goals: ['fairness'],
  plans: (PLANS.plans ?? []).map(({ quota: _quota, ...plan }) => plan),
  quotas: undefined,
};

/**
 * MAIN (fairness per API key: burst 12; anonymous per IP: burst 2; login 3 per account, 5 per IP) with every access
 * feature: an allowlist (address, API key, route), a deny list, a penalty box on the auth rows,
 * a custom api-key function and the memory fallback.
 */
export const ACCESS: AnswersInput = {
  ...MAIN,
  project: { name: 'middleware access API' },
  failure: { byClass: { auth: 'closed', read: 'open', export: 'open' }, fallback: 'memory' },
  access: {
    allow: {
      cidrs: ['198.51.100.0/24'],
      identities: [{ kind: 'api-key', value: 'svc-monitor' }],
      routes: [{ method: 'GET', route: '/v1/items/:id' }],
      reason: 'the uptime monitor',
    },
    deny: {
      cidrs: ['203.0.113.0/24'],
      identities: [
        { kind: 'api-key', value: 'revoked' },
        { kind: 'user', value: '42' },
      ],
      status: 403,
    },
    penalty: { refusals: 2, withinSeconds: 60, blockSeconds: 30 },
    customIdentities: [{ kind: 'api-key', from: 'the x-custom-key header' }],
  },
};

/** The same API with no shared store: every rule runs in process. */
export const IN_PROCESS: AnswersInput = {
  ...MAIN,
  project: { name: 'in-process API' },
  stack: { ...MAIN.stack, store: 'none' },
  headers: { convention: 'ietf-trio', docsUrl: DOCS },
};

/** Hostile text in every user-supplied string that reaches the generated TypeScript. */
export const HOSTILE_TEXT = 'x */ `${process.exit(1)}` "q" \'s\' \\ </script> \u2028 \n// end';

export const HOSTILE: AnswersInput = {
  project: { name: `Evil */ project \`\${1}\` </script>\n// "` },
  stack: { framework: 'koa', topology: 'single', gateway: 'none', store: 'redis', trustedProxies: ['10.0.0.0/8'] },
  identities: ['tenant', 'ip'],
  endpoints: [
    { name: `ord*/ers \`\${x}\` "q"\n</script>`, method: 'GET', route: '/v1/o*/rders/:id', class: 'read', cost: 3 },
    { name: 'login */ `${a}`', method: 'POST', route: '/v1/log\'in"/`x`', class: 'auth', authKind: 'login' },
  ],
  plans: [{ name: `Gold */ \`\${y}\` "p" </script>\u2028`, rate: { requests: 10, per: 'second' }, quota: 1000 }],
  quotas: { reset: { kind: 'calendar', period: 'day', timeZone: 'America/New_York' } },
  headers: { convention: 'x-ratelimit', docsUrl: 'https://docs.example.com/a*/b?q=`${x}`&r="</script>' },
  rules: [
    {
      id: 'hand-written',
      description: HOSTILE_TEXT,
      endpoints: [`ord*/ers \`\${x}\` "q"\n</script>`],
      identity: 'tenant',
      algorithm: 'token-bucket',
      key: 'rl:{t:<tenant-id>}:*/`${k}`"',
      rate: { requests: 5, per: 'second' },
      burst: 5,
      failMode: 'open',
      layer: 'middleware',
      ttlSeconds: 1,
    },
  ],
};

/**
 * An OAuth 2.0 token endpoint (authKind token): the per-client row allows 3 tries per client id
 * an hour, the per-IP row 5 per address an hour (fail closed, silent), beside a health check.
 * Loopback is a trusted proxy, so tests can play the proxy and name the client address.
 */
export const TOKEN: AnswersInput = {
  project: { name: 'middleware token API' },
  goals: ['abuse'],
  stack: {
    language: 'TypeScript',
    framework: 'express',
    topology: 'single',
    gateway: 'none',
    store: 'redis',
    trustedProxies: ['127.0.0.0/8', '::1/128'],
  },
  identities: ['ip'],
  endpoints: [
    { name: 'token', method: 'POST', route: '/oauth/token', class: 'auth', authKind: 'token' },
    { name: 'healthz', method: 'GET', route: '/healthz', class: 'health', anonymous: true },
  ],
  traffic: { typicalRps: 50, peakRps: 200, burstiness: 'moderate' },
  failure: { byClass: { auth: 'closed' } },
  headers: { convention: 'ietf-structured', docsUrl: DOCS },
  rules: [
    { id: 'auth-token-per-identity', rate: { requests: 3, per: 'hour' } },
    { id: 'auth-token-per-ip', rate: { requests: 5, per: 'hour' } },
  ],
};
