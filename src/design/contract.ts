/** The response contract: one header convention, Retry-After on every 429, silent security limits. */
import type { Diagram, HeaderConvention, HeaderSpec, MatrixRule, ResponseContract } from './model.js';

export const IETF_DRAFT = 'draft-ietf-httpapi-ratelimit-headers-11';

function exampleRule(rules: MatrixRule[]): MatrixRule | undefined {
  return rules.find((r) => r.tier === 'fairness' && r.headers === 'full' && r.rate) ?? rules.find((r) => r.headers === 'full' && r.rate);
}

export function headerSpecs(convention: HeaderConvention, example: MatrixRule | undefined): HeaderSpec[] {
  const policy = example?.id ?? 'default';
  const q = example?.burst ?? example?.rate?.requests ?? 100;
  const w = example?.rate?.periodSeconds ?? 60;
  switch (convention) {
    case 'ietf-structured':
      return [
        {
          name: 'RateLimit-Policy',
          example: `"${policy}";q=${q};w=${w}`,
          meaning: 'The policy that applies: quota q (tokens) per window w (seconds), named after the matrix rule.',
        },
        {
          name: 'RateLimit',
          example: `"${policy}";r=${Math.max(0, q - 1)};t=${w}`,
          meaning: 'What is left now: r units remaining, t seconds until the window (or a full bucket) is restored.',
        },
      ];
    case 'ietf-trio':
      return [
        { name: 'RateLimit-Limit', example: String(q), meaning: 'Units allowed in the current window.' },
        { name: 'RateLimit-Remaining', example: String(Math.max(0, q - 1)), meaning: 'Units left in the current window.' },
        { name: 'RateLimit-Reset', example: String(w), meaning: 'Seconds until the window resets (delta seconds, not a timestamp).' },
      ];
    case 'x-ratelimit':
      return [
        { name: 'X-RateLimit-Limit', example: String(q), meaning: 'Units allowed in the current window.' },
        { name: 'X-RateLimit-Remaining', example: String(Math.max(0, q - 1)), meaning: 'Units left in the current window.' },
        { name: 'X-RateLimit-Reset', example: String(w), meaning: 'Seconds until the window resets.' },
      ];
  }
}

const SPEC_REFERENCE: Record<HeaderConvention, string> = {
  'ietf-structured': `${IETF_DRAFT} (the RateLimit and RateLimit-Policy structured fields introduced in -08; unchanged in syntax through -11)`,
  'ietf-trio': 'draft-ietf-httpapi-ratelimit-headers-07 and earlier (RateLimit-Limit / -Remaining / -Reset), kept for clients that already parse it',
  'x-ratelimit': 'the de-facto X-RateLimit-* convention (GitHub, Twitter style); no specification',
};

/** Seconds the example 429 asks the client to wait (the error bodies use the same number). */
const EXAMPLE_RETRY_AFTER = 3;

/**
 * The exchange a throttled client goes through: the refusal with Retry-After and the
 * convention's headers, the wait with jitter, and the retry that passes. The limiter store
 * appears when a rule keeps its state there.
 */
function sequenceDiagram(rules: MatrixRule[]): Diagram | undefined {
  const clientFacing = rules.filter((r) => r.headers === 'full');
  if (clientFacing.length === 0) return undefined;
  const usesStore = clientFacing.some((r) => r.primitive === 'redis-lua');
  const wait = EXAMPLE_RETRY_AFTER;
  // Messages stay short: one line each (the headers are listed in the table above the diagram).
  const check = (allowed: boolean): Diagram['edges'] =>
    usesStore
      ? [
          { from: 'api', to: 'store', label: 'check and consume' },
          { from: 'store', to: 'api', label: allowed ? 'allowed' : `denied, retry in ${wait} s`, dashed: true },
        ]
      : [];
  return {
    kind: 'sequence',
    title: 'A throttled request and its retry',
    nodes: [
      { id: 'client', label: ['API client'], shape: 'box' },
      { id: 'api', label: ['API and limiter'], shape: 'box' },
      ...(usesStore ? [{ id: 'store', label: ['limiter store'], shape: 'store' as const }] : []),
    ],
    edges: [
      { from: 'client', to: 'api', label: 'request' },
      ...check(false),
      { from: 'api', to: 'client', label: `429, Retry-After: ${wait}`, dashed: true },
      { from: 'client', to: 'client', label: `wait ${wait} s + jitter` },
      { from: 'client', to: 'api', label: 'retry' },
      ...check(true),
      { from: 'api', to: 'client', label: '200 OK, limit headers', dashed: true },
    ],
  };
}

export function buildContract(
  rules: MatrixRule[],
  convention: HeaderConvention,
  docsUrl: string,
): ResponseContract {
  const example = exampleRule(rules);
  const silent = rules.filter((r) => r.headers === 'silent').map((r) => r.id);
  const quota = rules.find((r) => r.errorCode === 'QUOTA_EXCEEDED');
  const rateLimitedBody: Record<string, unknown> = {
    type: `${docsUrl}#rate-limited`,
    title: 'Too many requests',
    status: 429,
    code: 'RATE_LIMITED',
    detail: `Limit ${example?.id ?? 'default'} exceeded; retry after the time in Retry-After.`,
    limit: { rule: example?.id ?? 'default', quota: example?.burst ?? example?.rate?.requests ?? 100, windowSeconds: example?.rate?.periodSeconds ?? 60 },
    retryAfterSeconds: EXAMPLE_RETRY_AFTER,
    resetSeconds: EXAMPLE_RETRY_AFTER,
    documentation: docsUrl,
  };
  const headers = headerSpecs(convention, example);
  const sequence = sequenceDiagram(rules);
  const contract: ResponseContract = {
    convention,
    specReference: SPEC_REFERENCE[convention],
    headers,
    retryAfter: {
      onEvery429: true,
      unit: 'seconds',
      jitterGuidance:
        'Retry-After is the earliest moment a retry can pass. Clients wait that long plus a random 0-50% of it (or full jitter on exponential backoff for repeated 429s): a fleet that retries at exactly Retry-After arrives as one synchronized wave and trips the limit again.',
    },
    silentRuleIds: silent,
    rateLimitedBody,
    storeUnavailable: { status: 503, retryAfterSeconds: 5 },
    docsUrl,
    clientBehaviour: [
      'Read the rate-limit headers on every response and slow down before the remaining count reaches zero.',
      'On 429, wait at least Retry-After seconds, plus random jitter; never retry immediately.',
      'On repeated 429s, back off exponentially (doubling, capped, with full jitter).',
      'Treat QUOTA_EXCEEDED as "stop until the reset", not as "retry soon".',
      'On 503 from a fail-closed limit, retry after Retry-After like any 503.',
    ],
    ...(sequence ? { sequenceDiagram: sequence } : {}),
  };
  if (quota) {
    contract.quotaExceededBody = {
      type: 'https://iana.org/assignments/http-problem-types#quota-exceeded',
      title: 'Quota exceeded',
      status: 429,
      code: 'QUOTA_EXCEEDED',
      detail: `The ${quota.plan ?? ''} plan quota for this period is used up.`.replace('  ', ' '),
      'violated-policies': [quota.id],
      limit: { rule: quota.id, quota: quota.rate?.requests, period: quota.rate?.periodText },
      retryAfterSeconds: 86400,
      documentation: docsUrl,
    };
  }
  return contract;
}
