/**
 * The verify run: for every rule the scripts enforce, the scenarios that apply to it, run
 * through the shipped runtime (src/verify/runtime.ts) against the store it is given, under a
 * unique key prefix; then every key under that prefix is
 * deleted (SCAN + UNLINK, never KEYS, FLUSHDB or FLUSHALL). The store outage runs last, and
 * only against a server this process started.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Registry } from 'prom-client';
import type { Design } from '../design/model.js';
import { TOOL_VERSION } from '../version.js';
import { checkServer, dualKeyPairs, type ConfigCheck } from './config.js';
import type { Store } from './redis.js';
import { burstAtBoundary } from './scenarios/burst-at-boundary.js';
import { concurrentRace } from './scenarios/concurrent-race.js';
import { ruleContext, RunKeys, type Outcome, type RuleContext } from './scenarios/context.js';
import { costWeightedExhaustion, weightsOf } from './scenarios/cost-weighted-exhaustion.js';
import { dualKeyAuth } from './scenarios/dual-key-auth.js';
import { keyTtl } from './scenarios/key-ttl.js';
import { storeOutage } from './scenarios/store-outage.js';
import { throttledRecovery } from './scenarios/throttled-recovery.js';
import { worstCase } from './scenarios/worst-case.js';
import { worstCaseTable } from '../design/worst-case.js';
import { verifyData } from './runtime.js';
import type { ScriptSet } from './scripts.js';
import { classifyRule, SCRIPT_OF } from './shapes.js';
import type { LuaScriptName } from '../lua.js';
import { latencyOf } from './stats.js';
import { SCENARIO_ORDER, type RuleSummary, type ScenarioResult, type VerifyReport, type VerifyScenarioId } from './types.js';

export type ProgressEvent =
  | { phase: 'start'; index: number; total: number; ruleId: string; scenario: VerifyScenarioId }
  | { phase: 'done'; index: number; total: number; result: ScenarioResult };

export interface VerifyOptions {
  /** The scripts to run (src/lua.ts, or the testing hook's folder). */
  scripts: ScriptSet;
  /** YYYY-MM-DD recorded with the results. */
  date: string;
  onProgress?: (event: ProgressEvent) => void;
  /** The run's key prefix (default `rl-verify:<16 random hex>:`). */
  keyPrefix?: string;
}

/** Refused before anything is written. */
export class ReplicaRefusedError extends Error {
  constructor(readonly address: string) {
    super(`${address} is a replica`);
    this.name = 'ReplicaRefusedError';
  }
}

export function newKeyPrefix(): string {
  return `rl-verify:${randomBytes(8).toString('hex')}:`;
}

interface Task {
  ruleId: string;
  ruleIds: string[];
  scenario: VerifyScenarioId;
  run?: () => Promise<Outcome>;
  /** A scenario that does not run for this rule, and why. */
  skip?: string;
}

function resultOf(task: Task, outcome: Outcome, samples: number[], durationMs: number): ScenarioResult {
  const latency = latencyOf(samples);
  const detail = outcome.detail ?? '';
  return {
    ruleId: task.ruleId,
    ruleIds: task.ruleIds,
    scenario: task.scenario,
    status: outcome.passed ? 'passed' : 'failed',
    expected: outcome.expected,
    measured: outcome.measured,
    detail,
    ...(outcome.numbers ? { numbers: outcome.numbers } : {}),
    ...(outcome.params ? { params: outcome.params } : {}),
    ...(outcome.scaling ? { scaling: outcome.scaling } : {}),
    ...(latency ? { latency } : {}),
    durationMs: Math.round(durationMs),
    ...(outcome.measurements ? { measurements: outcome.measurements } : {}),
  };
}

function skipped(task: Task): ScenarioResult {
  return {
    ruleId: task.ruleId,
    ruleIds: task.ruleIds,
    scenario: task.scenario,
    status: 'skipped',
    expected: '',
    measured: 'not run',
    detail: task.skip ?? '',
    durationMs: 0,
  };
}

/** Runs the design's scenarios on the store. Throws ReplicaRefusedError on a replica. */
export async function verifyDesign(design: Design, store: Store, options: VerifyOptions): Promise<VerifyReport> {
  if (store.facts.role === 'replica') throw new ReplicaRefusedError(store.address);
  const checks: ConfigCheck[] = checkServer(store.facts, design);
  const keys = new RunKeys(options.keyPrefix ?? newKeyPrefix());
  const data = verifyData(design, options.scripts);
  let scanned: Promise<string[]> | undefined;
  const runKeys = (): Promise<string[]> => (scanned ??= store.scan(`${keys.runPrefix}*`));

  // Which rules run, on which script: a field of its identity's hash runs on identity-limits
  // (the runtime checks the identity's limits there), every other rule on its driver's script
  const scriptOf = new Map<string, LuaScriptName>();
  const summaries: RuleSummary[] = [];
  const contexts: RuleContext[] = [];
  design.rules.forEach((rule, i) => {
    const c = classifyRule(rule, design);
    const inHash = data.specs.get(rule.id)?.field != null && data.specs.get(rule.id)?.store === 'redis';
    if (c.ok) scriptOf.set(rule.id, inHash ? 'identity-limits' : SCRIPT_OF[c.driver]);
    const summary: RuleSummary = {
      ruleId: rule.id,
      title: rule.title,
      ...(rule.algorithm ? { algorithm: rule.algorithm } : {}),
      ...(rule.layer ? { layer: rule.layer } : {}),
      ...(rule.failMode ? { failMode: rule.failMode } : {}),
      ...(rule.key ? { key: rule.key } : {}),
      verifiable: c.ok,
      ...(c.ok ? { script: scriptOf.get(rule.id) } : { reason: c.reason }),
    };
    summaries.push(summary);
    if (!c.ok) return;
    const spec = data.specs.get(rule.id);
    contexts.push(
      ruleContext(
        {
          rule,
          number: i + 1,
          design,
          driver: c.driver,
          ...(rule.failMode ? { failMode: rule.failMode } : {}),
          ...(spec ? { spec } : {}),
          registry: new Registry(),
          data,
          keys,
          store,
          runKeys,
        },
        options.scripts,
      ),
    );
  });

  // Load every script the run needs; the SHA1 Redis answers must be the one codegen computed.
  const scriptOfContext = (c: RuleContext): LuaScriptName => scriptOf.get(c.rule.id) ?? SCRIPT_OF[c.driver];
  const needed = new Set(contexts.map(scriptOfContext));
  const broken = new Map<string, string>();
  const loaded: string[] = [];
  for (const name of needed) {
    const script = options.scripts.get(name);
    if (!script) {
      broken.set(name, `script ${name} is missing`);
      continue;
    }
    for (const part of [script, ...(script.consume ? [script.consume] : [])]) {
      try {
        const shas = await store.scriptLoad(part.source);
        if (shas.some((s) => s !== part.sha1)) broken.set(name, `${part.file}: Redis computed SHA1 ${shas[0]}, codegen ${part.sha1}`);
      } catch (e) {
        broken.set(name, `${part.file} does not load: ${(e as Error).message}`);
      }
    }
    if (!broken.has(name)) loaded.push(`${script.file} ${script.sha1.slice(0, 12)}${script.consume ? ` + ${script.consume.file}` : ''}`);
  }
  checks.push(
    broken.size > 0
      ? { id: 'scripts', level: 'fail', message: [...broken.values()].join('; ') }
      : {
          id: 'scripts',
          level: 'ok',
          message: loaded.length
            ? `Loaded ${loaded.join(', ')} (SHA1s as EVALSHA uses them; Redis computed the same).`
            : 'No rule runs on a Redis script.',
        },
  );

  // The tasks, in a stable order: per rule, the scenarios that apply.
  const pairs = dualKeyPairs(design.rules);
  const measurable = worstCaseTable(design).filter((r) => r.measurable);
  const tasks: Task[] = [];
  const ttlTasks: Task[] = [];
  const outageTasks: Task[] = [];
  for (const ctx of contexts) {
    const id = ctx.rule.id;
    const one = (scenario: VerifyScenarioId, run: () => Promise<Outcome>): Task => ({ ruleId: id, ruleIds: [id], scenario, run });
    const list: Task[] = [one('burst-at-boundary', () => burstAtBoundary(ctx)), one('concurrent-race', () => concurrentRace(ctx))];
    if (ctx.driver === 'gcra' && weightsOf(ctx.rule).length > 0)
      list.push(one('cost-weighted-exhaustion', () => costWeightedExhaustion(ctx)));
    const pair = pairs.find((p) => p.identity.id === id);
    const ipCtx = pair ? contexts.find((c) => c.rule.id === pair.ip.id) : undefined;
    if (pair && ipCtx)
      list.push({ ruleId: id, ruleIds: [id, pair.ip.id], scenario: 'dual-key-auth', run: () => dualKeyAuth(ctx, pair.ip, ipCtx.number) });
    if (ctx.driver === 'fixed-window') {
      list.push({
        ruleId: id,
        ruleIds: [id],
        scenario: 'throttled-recovery',
        skip: 'not run: a quota comes back when its period ends; waiting for that is not a test (the boundary scenario checks that Retry-After points at the period end)',
      });
    } else {
      list.push(one('throttled-recovery', () => throttledRecovery(ctx)));
    }
    // the memory fallback is measured during the store outage (below), not here
    const kinds = measurable.filter((r) => r.ruleId === id && r.kind !== 'memory-fallback').map((r) => r.kind);
    if (kinds.length > 0 && (ctx.driver === 'gcra' || ctx.driver === 'fixed-window') && ctx.spec)
      list.push(one('worst-case', () => worstCase(ctx, kinds)));
    tasks.push(...list);
    // After every other scenario of every rule, so one SCAN of the run's keys serves them all.
    ttlTasks.push(one('key-ttl', () => keyTtl(ctx)));
    outageTasks.push(
      store.spawned
        ? { ruleId: id, ruleIds: [id], scenario: 'store-outage' }
        : {
            ruleId: id,
            ruleIds: [id],
            scenario: 'store-outage',
            skip: `not run: rl-design stops only a Redis it started, and ${store.address} was given with --redis (run without --redis to include it)`,
          },
    );
  }
  tasks.push(...ttlTasks);
  const total = tasks.length + outageTasks.length;
  const results: ScenarioResult[] = [];
  const samplesAll: number[] = [];
  const collect = (ctx: RuleContext | undefined, scenario: VerifyScenarioId): number[] => {
    if (!ctx) return [];
    ctx.closeProbes();
    const s = ctx.takeSamples();
    // The run's latency is that of calls made one at a time; a race measures queueing, the
    // worst case concurrency and waits.
    if (scenario !== 'concurrent-race' && scenario !== 'worst-case') samplesAll.push(...s);
    return s;
  };
  const emit = (index: number, result: ScenarioResult): void => {
    results.push(result);
    options.onProgress?.({ phase: 'done', index, total, result });
  };

  let keysDeleted = 0;
  try {
    let index = 0;
    for (const task of tasks) {
      index++;
      options.onProgress?.({ phase: 'start', index, total, ruleId: task.ruleId, scenario: task.scenario });
      const ctx = contexts.find((c) => c.rule.id === task.ruleId);
      const scriptError = ctx ? broken.get(scriptOfContext(ctx)) : undefined;
      if (scriptError && task.run) {
        emit(
          index,
          resultOf(
            task,
            { passed: false, expected: 'the script loads', measured: 'not run: the script did not load', detail: scriptError },
            [],
            0,
          ),
        );
        continue;
      }
      if (!task.run) {
        emit(index, skipped(task));
        continue;
      }
      const t0 = performance.now();
      let outcome: Outcome;
      try {
        outcome = await task.run();
      } catch (e) {
        outcome = { passed: false, expected: '', measured: `error: ${(e as Error).message}` };
      }
      emit(index, resultOf(task, outcome, collect(ctx, task.scenario), performance.now() - t0));
    }

    // The outage, last: it empties the server.
    const runnable = outageTasks.filter((t) => !t.skip && !broken.has(scriptOfContext(contexts.find((c) => c.rule.id === t.ruleId)!)));
    if (store.spawned && runnable.length > 0) {
      // Keys written so far go first, while the server still holds them.
      keysDeleted += await cleanup(store, keys.runPrefix);
      // One outage for all rules: announced once, then each rule's verdict.
      const first = runnable[0]!;
      options.onProgress?.({
        phase: 'start',
        index: tasks.length + outageTasks.indexOf(first) + 1,
        total,
        ruleId: first.ruleId,
        scenario: 'store-outage',
      });
      const t0 = performance.now();
      const ctxs = runnable.map((t) => contexts.find((c) => c.rule.id === t.ruleId)!);
      let outcomes: Map<string, Outcome>;
      try {
        // the memory fallback's rows: N limiters with the fallback on, while the server is down
        const instances = design.enforcement.fallback?.instances ?? 1;
        const fallbacks = new Map(
          measurable
            .filter((r) => r.kind === 'memory-fallback')
            .filter((r) => ctxs.some((c) => c.rule.id === r.ruleId && c.spec && (c.driver === 'gcra' || c.driver === 'fixed-window')))
            .map((r) => [r.ruleId, instances]),
        );
        outcomes = await storeOutage(ctxs, store, store.spawned, design.contract.storeUnavailable.retryAfterSeconds, fallbacks);
      } catch (e) {
        const failure: Outcome = {
          passed: false,
          expected: 'the store stops and starts again',
          measured: `error: ${(e as Error).message}`,
        };
        outcomes = new Map(runnable.map((t) => [t.ruleId, failure]));
      }
      const ms = (performance.now() - t0) / runnable.length;
      runnable.forEach((t, i) => {
        const ctx = ctxs[i]!;
        emit(tasks.length + outageTasks.indexOf(t) + 1, resultOf(t, outcomes.get(t.ruleId)!, collect(ctx, 'store-outage'), ms));
      });
    }
    outageTasks.forEach((t, i) => {
      if (!runnable.includes(t))
        emit(
          tasks.length + i + 1,
          t.skip
            ? skipped(t)
            : resultOf(
                t,
                {
                  passed: false,
                  expected: 'the script loads',
                  measured: 'not run: the script did not load',
                  detail: broken.get(scriptOfContext(contexts.find((c) => c.rule.id === t.ruleId)!)) ?? '',
                },
                [],
                0,
              ),
        );
    });
  } finally {
    for (const ctx of contexts) ctx.closeProbes();
    keysDeleted += await cleanup(store, keys.runPrefix).catch(() => 0);
  }

  const order = (r: ScenarioResult): number => design.rules.findIndex((x) => x.id === r.ruleId) * 100 + SCENARIO_ORDER.indexOf(r.scenario);
  results.sort((a, b) => order(a) - order(b));
  const counts = {
    passed: results.filter((r) => r.status === 'passed').length,
    failed: results.filter((r) => r.status === 'failed').length,
    skipped: results.filter((r) => r.status === 'skipped').length,
  };
  const latency = latencyOf(samplesAll);
  return {
    tool: 'rl-design',
    toolVersion: TOOL_VERSION,
    date: options.date,
    project: design.scope.projectName,
    passed: counts.failed === 0 && !checks.some((c) => c.level === 'fail'),
    server: {
      product: store.facts.product,
      version: store.facts.version,
      redisVersion: store.facts.redisVersion,
      mode: store.facts.mode,
      role: store.facts.role,
      ...(store.facts.maxmemoryPolicy ? { maxmemoryPolicy: store.facts.maxmemoryPolicy } : {}),
      spawned: !!store.spawned,
      address: store.address,
    },
    checks,
    keyPrefix: keys.runPrefix,
    keysDeleted,
    rules: summaries,
    results,
    ...(latency ? { latency } : {}),
    counts,
  };
}

/** Deletes every key under the prefix: SCAN MATCH + UNLINK. Nothing else is touched. */
export async function cleanup(store: Store, prefix: string): Promise<number> {
  if (!/^rl-verify:[0-9a-z]+:$/.test(prefix)) throw new Error(`refusing to delete keys under an unexpected prefix: ${prefix}`);
  const found = await store.scan(`${prefix}*`);
  return found.length ? store.unlink(found) : 0;
}
