// rl-design 0.1.0 runtime, copied verbatim from the rl-design package. Do not edit: generate again.
/** The types of the outbound client's data module (providers.ts): a provider's bucket and the circuit. */

/** One provider's limit, as the design states it. */
export interface ProviderLimit {
  readonly name: string;
  /** The matrix rule that owns this bucket. */
  readonly ruleId: string;
  /** Redis key of the shared bucket (hash-tagged, one cluster slot), or '' when in-process. */
  readonly key: string;
  /** true: one bucket in Redis for every instance; false: a bucket in this process only. */
  readonly shared: boolean;
  /** Calls admitted per period (already below the provider's documented limit). */
  readonly rate: number;
  readonly periodMs: number;
  /** Calls that may go out back to back when the bucket is full. */
  readonly burst: number;
  /** The per-rule feature flag: off | shadow | enforce. */
  readonly killSwitchFlag?: string;
}

export interface CircuitSettings {
  /** Provider 429s or failures within windowMs that open the circuit. */
  readonly failureThreshold: number;
  readonly windowMs: number;
  /** How long the circuit stays open (at least the provider's Retry-After). */
  readonly openMs: number;
  /** Calls let through while half-open; their outcome closes or reopens the circuit. */
  readonly halfOpenProbes: number;
}
