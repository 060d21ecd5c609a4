/**
 * The closed sets of values the answers use (periods, goals, frameworks, ...), as plain
 * constants: the schema (schema.ts) builds its enums from them, and the command line lists
 * them in its help without loading the schema.
 */
export const PERIODS = ['second', 'minute', 'hour', 'day'] as const;
export const GOALS = ['overload', 'abuse', 'fairness', 'quotas'] as const;
export const FRAMEWORKS = ['express', 'fastify', 'koa', 'hono', 'nestjs', 'other'] as const;
export const GATEWAYS = ['nginx', 'envoy', 'kong', 'aws-api-gateway', 'cloudflare', 'none'] as const;
export const STORES = ['redis', 'redis-cluster', 'valkey', 'none'] as const;
export const IDENTITIES = ['api-key', 'user', 'tenant', 'ip', 'session'] as const;
export const ENDPOINT_CLASSES = ['auth', 'read', 'write', 'search', 'expensive', 'export', 'webhook', 'health'] as const;
export const AUTH_KINDS = ['login', 'signup', 'password-reset', 'token', 'mfa', 'other'] as const;
export const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'ANY'] as const;
export const FAIL_MODES = ['open', 'closed'] as const;
export const HEADER_CONVENTIONS = ['ietf-structured', 'ietf-trio', 'x-ratelimit'] as const;
export const BURSTINESS = ['low', 'moderate', 'high'] as const;
export const EXHAUSTION = ['hard', 'soft-warning', 'pay-per-overage'] as const;
export const ALGORITHMS = ['token-bucket', 'leaky-bucket', 'gcra', 'sliding-window-log', 'sliding-window-counter', 'fixed-window'] as const;
export const LAYERS = ['edge', 'middleware', 'outbound-client'] as const;
export const PRIMITIVES = ['redis-lua', 'gateway-native', 'in-process', 'incr-then-expire', 'get-then-set'] as const;
export const RULE_IDENTITIES = ['global', 'api-key', 'user', 'tenant', 'ip', 'session', 'username', 'provider'] as const;

/**
 * The adapter file the shipped runtime has for each framework (NestJS runs on Express), or
 * null: no adapter, the application calls createLimiter(DESIGN) itself.
 */
export const FRAMEWORK_ADAPTERS: Readonly<Record<(typeof FRAMEWORKS)[number], string | null>> = {
  express: 'express.ts',
  fastify: 'fastify.ts',
  koa: 'koa.ts',
  hono: 'hono.ts',
  nestjs: 'express.ts',
  other: null,
};
