/** Ids, slugs and flag names derived from user-supplied names. */
import { FRAMEWORK_ADAPTERS } from '../answers/choices.js';
import type { RuleIdentity } from './model.js';

/** What one key of a rule keyed on this identity stands for, in the document's words ("API key", "tenant"). */
export function identityLabel(identity: RuleIdentity): string {
  switch (identity) {
    case 'api-key':
      return 'API key';
    case 'global':
      return 'deployment';
    default:
      return identity;
  }
}

/** The identities whose rules fall back to another one (never to the client IP where callers may be anonymous). */
export const ACCOUNT_IDENTITIES: readonly RuleIdentity[] = ['api-key', 'user', 'tenant', 'session'];

/** Lowercase ASCII slug, safe in rule ids, Redis keys, file names and config. */
export function slug(value: string): string {
  const s = value
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/g, '');
  return s.length > 0 ? s : 'x';
}

/** Hands out ids, suffixing -2, -3 ... when two names slug to the same id. */
export class IdAllocator {
  private readonly used = new Set<string>();

  take(base: string): string {
    let id = base;
    for (let n = 2; this.used.has(id); n++) id = `${base}-${n}`;
    this.used.add(id);
    return id;
  }
}

/** The per-rule feature flag: off | shadow | enforce. */
export function killSwitchFlag(ruleId: string): string {
  return `ratelimit.${ruleId}.mode`;
}

export const KEY_PREFIX = 'rl';

/** Whether the answers' language names JavaScript (the runtime ships as TypeScript source). */
export function isJavaScript(language: string): boolean {
  return /^(?:javascript|js|node(?:\.?js)?|ecmascript)$/i.test(language.trim());
}

/**
 * Whether an application in this language can run the shipped runtime (TypeScript for Node.js):
 * TypeScript, or JavaScript (compiled from it), also on Deno or Bun.
 */
export function runsOnNode(language: string): boolean {
  return isJavaScript(language) || /^(?:type\s*script|ts|deno|bun)$/i.test(language.trim());
}

/**
 * The component that runs the middleware rules, as the document names it: the framework's
 * adapter file; for a framework the runtime has no adapter for, the application calling the
 * framework-neutral limiter itself; for an application that does not run on Node.js, its own
 * port of the runtime (the Lua scripts run unchanged from any Redis client).
 */
/** The component that runs the outbound buckets: the shipped client, or, off Node.js, the application's port of it. */
export function outboundComponent(language: string): string {
  return runsOnNode(language)
    ? 'outbound HTTP client wrapper'
    : `a ${language} port of the shipped outbound client (outbound/client.ts is TypeScript for Node.js, the reference to port; lua/outbound-bucket.lua runs unchanged, and the code README gives each provider's calls)`;
}

export function middlewareComponent(framework: keyof typeof FRAMEWORK_ADAPTERS, language: string): string {
  if (!runsOnNode(language)) {
    return `a ${language} port of the shipped limiter (the generated middleware/ is TypeScript for Node.js, the reference to port: its request path, keys and headers; the Lua scripts run unchanged from any ${language} Redis client, the code README gives each rule's script call, and middleware/design.ts holds the rules as data)`;
  }
  const adapter = FRAMEWORK_ADAPTERS[framework];
  return adapter === null
    ? `the framework-neutral limiter, createLimiter(DESIGN) in middleware/limiter.ts, called from the application (${language}; no adapter exists for this framework: the code README shows the call)`
    : `${framework} middleware, middleware/${adapter} (${language})`;
}

/**
 * The server the user runs for the limiter's store, by name: Valkey when the answers say so, else
 * Redis (a Redis Cluster's nodes are Redis servers). The Lua scripts, the commands and the
 * client protocol are Redis's in both, and the text about them keeps that name.
 */
export function storeServerName(store: string): 'Valkey' | 'Redis' {
  return store === 'valkey' ? 'Valkey' : 'Redis';
}

/** The configuration file of the store's server: valkey.conf for Valkey, redis.conf for Redis. */
export function storeConfFile(store: string): string {
  return store === 'valkey' ? 'valkey.conf' : 'redis.conf';
}
