/** Display names for the model's enum values (raw text: templates escape it). */
import type { Algorithm, Framework, Gateway, Goal, Layer, Primitive, RuleTier, Store } from '../../design/model.js';

const ALGORITHM_NAMES: Record<Algorithm, string> = {
  'token-bucket': 'token bucket',
  'leaky-bucket': 'leaky bucket',
  gcra: 'GCRA',
  'sliding-window-log': 'sliding window log',
  'sliding-window-counter': 'sliding window counter',
  'fixed-window': 'fixed window',
};

const LAYER_NAMES: Record<Layer, string> = {
  edge: 'edge',
  middleware: 'middleware',
  'outbound-client': 'outbound client',
};

const PRIMITIVE_NAMES: Record<Primitive, string> = {
  'redis-lua': 'Redis Lua script (EVALSHA)',
  'gateway-native': 'gateway-native limiter',
  'in-process': 'in-process bucket',
  'incr-then-expire': 'INCR then EXPIRE (not atomic)',
  'get-then-set': 'GET then SET (not atomic)',
};

const TIER_NAMES: Record<RuleTier, string> = {
  ceiling: 'ceiling',
  fairness: 'fairness',
  security: 'security',
  quota: 'quota',
  outbound: 'outbound',
};

const GOAL_NAMES: Record<Goal, string> = {
  overload: 'overload (protect capacity)',
  abuse: 'abuse (brute force, scraping)',
  fairness: 'fairness (noisy neighbours)',
  quotas: 'business quotas (plan tiers)',
};

const FRAMEWORK_NAMES: Record<Framework, string> = {
  express: 'Express',
  fastify: 'Fastify',
  koa: 'Koa',
  hono: 'Hono',
  nestjs: 'NestJS',
  other: 'another framework',
};

const GATEWAY_NAMES: Record<Gateway, string> = {
  nginx: 'nginx',
  envoy: 'Envoy',
  kong: 'Kong',
  'aws-api-gateway': 'AWS API Gateway',
  cloudflare: 'Cloudflare',
  none: 'none',
};

const STORE_NAMES: Record<Store, string> = {
  redis: 'Redis',
  'redis-cluster': 'Redis Cluster',
  valkey: 'Valkey',
  none: 'none',
};

function lookup<K extends string>(table: Record<K, string>, value: string | undefined): string {
  if (value === undefined) return '';
  return Object.hasOwn(table, value) ? table[value as K] : value;
}

export const algorithmName = (v: string | undefined): string => lookup(ALGORITHM_NAMES, v);
export const layerName = (v: string | undefined): string => lookup(LAYER_NAMES, v);
export const primitiveName = (v: string | undefined): string => lookup(PRIMITIVE_NAMES, v);
export const tierName = (v: string | undefined): string => lookup(TIER_NAMES, v);
export const goalName = (v: string | undefined): string => lookup(GOAL_NAMES, v);
export const frameworkName = (v: string | undefined): string => lookup(FRAMEWORK_NAMES, v);
export const gatewayName = (v: string | undefined): string => lookup(GATEWAY_NAMES, v);
export const storeName = (v: string | undefined): string => lookup(STORE_NAMES, v);
