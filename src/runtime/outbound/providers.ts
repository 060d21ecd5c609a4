/**
 * The design's providers: rl-design generates this file for each design (the providers, their
 * buckets, the circuit and the Lua script with its SHA1). This placeholder, with no provider,
 * only lets the runtime folder type-check on its own and is never shipped.
 */
import type { CircuitSettings, ProviderLimit } from './types.js';

export type ProviderName = never;

export const PROVIDERS: Readonly<Record<ProviderName, ProviderLimit>> = {};

export const CIRCUIT: CircuitSettings = { failureThreshold: 3, windowMs: 30000, openMs: 30000, halfOpenProbes: 1 };

export const OUTBOUND_BUCKET_SHA1 = '';

export const OUTBOUND_BUCKET_LUA = '';
