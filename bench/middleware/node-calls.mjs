/**
 * The limiter calls of the Node decision bench (run.mjs, 1.), all on one ioredis client:
 * - ours: limiter.check() of the generated one-rule middleware;
 * - rlf: rate-limiter-flexible's RateLimiterRedis.consume();
 * - raw: a bare evalsha of gcra.lua (the floor for any Node caller);
 * - saas: the saas-platform example's Enterprise tenant, its fairness bucket and monthly quota in
 *   one identity-limits call;
 * - rlfSaas: the same two limits with rate-limiter-flexible, the quota once the rate has admitted.
 * The timed rounds (run.mjs) put every call on one connection; the counted ones (node-child.mjs,
 * --instructions) run one kind per process. Both build their calls here.
 */
import { join, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Registry } from 'prom-client';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { loadCore } from './load-core.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dist = (p) => pathToFileURL(join(root, 'dist', p)).href;
const { luaScript } = await import(dist('lua.js'));
const { gcraNumbers } = await import(dist('runtime/middleware/store.js'));

export const KEYS = 10_000;
export const PATHS = 1_000;
export const KEY_NAMES = Array.from({ length: KEYS }, (_, i) => `key-${i}`);
export const URLS = Array.from({ length: PATHS }, (_, i) => `/v1/items/${i}`);
export const ORDER_URLS = Array.from({ length: PATHS }, (_, i) => `/v1/orders/${i}`);
/** The saas-platform caller: an Enterprise tenant. */
export const TENANT = (req) => ({ tenantId: req.k, plan: 'Enterprise' });
/** What every client of the bench gets: the same options for ours, rate-limiter-flexible and raw. */
export const clientOptions = (autoPipelining) => ({ maxRetriesPerRequest: 1, enableAutoPipelining: autoPipelining });

const REQS = KEY_NAMES.map((k) => ({ k }));
/** limiter.check() input for call i: one of KEYS API keys, one of PATHS URLs. */
const checkInput = (i, urls) => ({
  method: 'GET',
  url: urls[i % PATHS],
  remoteAddress: '127.0.0.1',
  forwardedFor: undefined,
  req: REQS[i % KEYS],
});

/**
 * Every decision must admit (a peer refuses by rejecting its promise). Checked by the caller
 * after its await, not in a .then() of our own: that would add a promise per call that the
 * peers' calls do not pay.
 */
export const admittedDecision = (d) => {
  if (d.status !== 200) throw new Error(`refused: ${d.status}`);
};
/** The calls whose result admittedDecision checks. */
export const VERIFIED = new Set(['ours', 'saas']);

/**
 * The five calls on `client`; out and saasOut are the compiled one-rule and saas-platform
 * middleware, ruleRate the one rule's rate per second (burst 10^6). Loads gcra.lua for raw.
 */
export async function nodeCalls(client, out, saasOut, ruleRate) {
  const [core, saasCore] = await Promise.all([loadCore(out), loadCore(saasOut)]);
  const limiter = core.createLimiter({
    redis: client,
    registry: new Registry(),
    defaultMode: 'enforce',
    identify: (req) => ({ apiKey: req.k }),
  });
  // the limiter's promise itself, as for the peers: its decision is checked once awaited
  const ours = (i) => limiter.check(checkInput(i, URLS));
  const rlfLimiter = new RateLimiterRedis({ storeClient: client, keyPrefix: 'rlf', points: 1_000_000_000, duration: 60 });
  const rlf = (i) => rlfLimiter.consume(KEY_NAMES[i % KEYS]);
  const gcra = luaScript('gcra');
  await client.script('LOAD', gcra.source);
  // gcra.lua's ARGV for the one rule (burst 10^6 at ruleRate per second): tolerance, increment, interval in us
  const { interval, tolerance } = gcraNumbers(1_000_000, ruleRate, 1000);
  const rawArgs = [String(tolerance), String(interval), String(interval)];
  const raw = (i) => client.evalsha(gcra.sha1, 1, `raw:{${KEY_NAMES[i % KEYS]}}`, ...rawArgs);
  const saasLimiter = saasCore.createLimiter({
    redis: client,
    registry: new Registry(),
    defaultMode: 'enforce',
    identify: TENANT,
    hybrid: false,
  });
  const saas = (i) => saasLimiter.check(checkInput(i, ORDER_URLS));
  const rlfRate = new RateLimiterRedis({ storeClient: client, keyPrefix: 'rlf-rate', points: 1_000_000_000, duration: 60 });
  const rlfQuota = new RateLimiterRedis({ storeClient: client, keyPrefix: 'rlf-quota', points: 1_000_000_000, duration: 31 * 86_400 });
  const rlfSaas = (i) => rlfRate.consume(KEY_NAMES[i % KEYS]).then(() => rlfQuota.consume(KEY_NAMES[i % KEYS]));
  return {
    calls: { ours, rlf, raw, saas, rlfSaas },
    close: () => {
      limiter.close();
      saasLimiter.close();
    },
  };
}

/** Runs `total` calls with `inFlight` workers; verify (optional) checks each result. */
export async function run(call, total, inFlight, verify, onCall) {
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      for (;;) {
        const i = next++;
        if (i >= total) return;
        const t0 = onCall === undefined ? 0 : performance.now();
        const result = await call(i);
        if (onCall !== undefined) onCall(i, performance.now() - t0);
        if (verify !== undefined) verify(result);
      }
    }),
  );
}
