/**
 * `rl-design verify`: run the design's test scenarios against a real Redis with the exact
 * generated Lua, print a table (or JSON), exit 1 on any failure, and with --write record the
 * results beside the answers file and regenerate the document with them.
 *
 * Testing hook (not a user option): the environment variable RL_DESIGN_LUA_DIR names a folder
 * whose scripts replace the shipped ones of the same file name (gcra.lua, ...); a
 * `<name>.consume.lua` beside one is run as a second script call after every admitting call,
 * which is how the test suite models a limiter that splits check and consume. It is read here
 * and only here, and passed down as a parameter.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { LUA_SCRIPTS, loadLuaScripts, luaSha1 } from '../lua.js';
import { writeOutputs, type PlannedFile } from '../io/write.js';
import { displayPath } from '../io/safe-fs.js';
import { UserError } from '../messages.js';
import { formatReport, loudWarnings } from '../verify/format.js';
import { scriptSet, type ScriptSet, type VerifyScript } from '../verify/scripts.js';
import {
  openStore,
  parseRedisUrl,
  RedisConnectError,
  RedisServerMissingError,
  RedisServerStartError,
  startRedisServer,
  withTimeout,
  type RedisTarget,
  type SpawnedRedis,
  type Store,
} from '../verify/redis.js';
import { applyResults, resultsOf, sidecarPath, sidecarText } from '../verify/results.js';
import { cleanup, newKeyPrefix, verifyDesign, type ProgressEvent } from '../verify/run.js';
import { SCENARIO_TITLES, type VerifyReport } from '../verify/types.js';
import type { CommandContext } from './context.js';
import { loadOpenApi, planOutputs } from './generate.js';
import { loadDesign, type SourceOptions } from './load-design.js';

export interface VerifyOptions extends SourceOptions {
  redis?: string;
  json?: boolean;
  write?: boolean;
  force?: boolean;
}

/** The side effects of verify, injected so tests can replace them. */
export interface VerifyIo {
  /** Whether stderr is a terminal: the progress line is drawn only there. */
  stderrIsTTY: boolean;
  /** Testing hook: a folder of replacement scripts (RL_DESIGN_LUA_DIR). */
  luaDir?: string;
  startServer: () => Promise<SpawnedRedis>;
  openStore: (target: RedisTarget, spawned?: SpawnedRedis) => Promise<Store>;
  /** The whole run (scenarios and cleanup), ms; default 10 minutes. */
  runTimeoutMs?: number;
  /** Routes SIGINT and SIGTERM to `handler`; returns the function that stops it. */
  onSignal?: (handler: (signal: 'SIGINT' | 'SIGTERM') => void) => () => void;
  /** Ends the process (after a signal). */
  exit?: (code: number) => void;
}

function nodeVerifyIo(): VerifyIo {
  const luaDir = process.env.RL_DESIGN_LUA_DIR;
  return {
    stderrIsTTY: process.stderr.isTTY === true,
    ...(luaDir ? { luaDir } : {}),
    startServer: () => startRedisServer(),
    openStore: (target, spawned) => openStore(target, spawned),
    onSignal: (handler) => {
      const onInt = (): void => handler('SIGINT');
      const onTerm = (): void => handler('SIGTERM');
      process.on('SIGINT', onInt);
      process.on('SIGTERM', onTerm);
      return () => {
        process.off('SIGINT', onInt);
        process.off('SIGTERM', onTerm);
      };
    },
    exit: (code) => process.exit(code),
  };
}

/** What to say about the keys a run that stopped early may have left, after trying to delete them. */
async function leftKeys(store: Store, prefix: string, reachable: boolean): Promise<string> {
  const manual = `Delete them with: redis-cli --scan --pattern '${prefix}*' | xargs -r redis-cli unlink`;
  if (!reachable) return `It could not delete the keys it wrote, all under the prefix ${prefix}. ${manual}`;
  try {
    await withTimeout(cleanup(store, prefix), 10_000, 'timeout');
    const remaining = (await withTimeout(store.scan(`${prefix}*`), 10_000, 'timeout')).length;
    if (remaining === 0) return `It came back, and no key of this run (prefix ${prefix}) remains.`;
  } catch {
    // reported below
  }
  return `It could not delete the keys it wrote, all under the prefix ${prefix}. ${manual}`;
}

/** The shipped scripts, exactly as src/lua.ts loads them. */
export function shippedScripts(): ScriptSet {
  return scriptSet(loadLuaScripts().map((s) => ({ name: s.name, file: s.file, source: s.source, sha1: s.sha1 })));
}

/** Testing hook: scripts from `dir` replace the shipped ones with the same file name. */
function scriptsFromDir(dir: string): ScriptSet {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new UserError('luaDirInvalid', { dir, reason: 'not a folder' });
  const shipped = shippedScripts();
  const read = (file: string): { file: string; source: string; sha1: string } | undefined => {
    const p = path.join(dir, file);
    if (!existsSync(p)) return undefined;
    const bytes = readFileSync(p);
    return { file, source: bytes.toString('utf8'), sha1: luaSha1(bytes) };
  };
  return scriptSet(
    LUA_SCRIPTS.map((meta): VerifyScript => {
      const own = read(meta.file);
      const consume = read(meta.file.replace(/\.lua$/, '.consume.lua'));
      const base = own ? { name: meta.name, ...own } : shipped.get(meta.name)!;
      return consume ? { ...base, consume } : base;
    }),
  );
}

/** One line on stderr, redrawn for every scenario. */
function progressLine(write: (s: string) => void): { onProgress: (e: ProgressEvent) => void; clear: () => void } {
  let drawn = false;
  return {
    onProgress: (e) => {
      const text =
        e.phase === 'start'
          ? `[${e.index}/${e.total}] ${e.ruleId}: ${SCENARIO_TITLES[e.scenario]} ...`
          : `[${e.index}/${e.total}] ${e.result.ruleId}: ${SCENARIO_TITLES[e.result.scenario]} ${e.result.status === 'passed' ? 'PASS' : e.result.status === 'failed' ? 'FAIL' : 'skip'}`;
      write(`\r\x1b[2K${text.length > 110 ? `${text.slice(0, 107)}...` : text}`);
      drawn = true;
    },
    clear: () => {
      if (drawn) write('\r\x1b[2K');
    },
  };
}

async function connect(opts: VerifyOptions, io: VerifyIo): Promise<{ store: Store; spawned?: SpawnedRedis }> {
  let target: RedisTarget;
  let spawned: SpawnedRedis | undefined;
  if (opts.redis !== undefined) {
    const parsed = parseRedisUrl(opts.redis);
    if ('error' in parsed) throw new UserError('badOption', { option: '--redis', reason: parsed.error });
    target = parsed;
  } else {
    try {
      spawned = await io.startServer();
    } catch (e) {
      if (e instanceof RedisServerMissingError) throw new UserError('redisServerMissing');
      if (e instanceof RedisServerStartError)
        throw new UserError('redisServerFailed', { reason: `${e.message}${e.output ? `\n${e.output.trim()}` : ''}` });
      throw e;
    }
    target = parseRedisUrl(spawned.url) as RedisTarget;
  }
  try {
    return { store: await io.openStore(target, spawned), ...(spawned ? { spawned } : {}) };
  } catch (e) {
    await spawned?.stop();
    if (e instanceof RedisConnectError) throw new UserError('redisConnectFailed', { address: e.address, reason: e.message });
    throw e;
  }
}

export async function runVerify(ctx: CommandContext, opts: VerifyOptions, io: VerifyIo = nodeVerifyIo()): Promise<number> {
  if (opts.write && opts.example) {
    throw new UserError('badOption', {
      option: '--write',
      reason: 'the results are stored beside the answers file; copy the example and pass it with -a FILE',
    });
  }
  const { design, file, answers, text: answersText } = await loadDesign(ctx, opts);
  const scripts = io.luaDir ? scriptsFromDir(path.resolve(ctx.cwd, io.luaDir)) : shippedScripts();
  const date = ctx.today();
  // Ctrl-C or SIGTERM from here on: the redis-server verify started and its folder go, and
  // the keys written to a named Redis are deleted (or named), before the process ends.
  let store: Store | undefined;
  let spawned: SpawnedRedis | undefined;
  const keyPrefix = newKeyPrefix();
  let stopping = false;
  const stopSignals =
    io.onSignal?.((signal) => {
      if (stopping) return;
      stopping = true;
      void (async () => {
        const code = signal === 'SIGINT' ? 130 : 143;
        spawned?.killNow();
        let note = '';
        if (store && !spawned) note = ` ${await leftKeys(store, keyPrefix, store.lost() === undefined)}`;
        ctx.stderr(`\nrl-design: ${signal}: verify stopped; nothing was written.${note}\n`);
        io.exit?.(code);
      })();
    }) ?? (() => undefined);
  const showProgress = !opts.json && io.stderrIsTTY;
  const progress = showProgress ? progressLine(ctx.stderr) : undefined;
  let report: VerifyReport;
  const started = performance.now();
  try {
    ({ store, spawned } = await connect(opts, io));
    const open = store;
    if (open.facts.role === 'replica') throw new UserError('redisReplica', { address: open.address });
    // Losing the server mid-run: wait a moment for it to come back; if it does not, close the
    // connections so every remaining call fails at once and the run ends now.
    let reachable = true;
    open.onLoss((_, stalled) => {
      if (stalled) {
        reachable = false;
        void open.close();
        return;
      }
      open.waitReady(3000).catch(() => {
        reachable = false;
        void open.close();
      });
    });
    const limitMs = io.runTimeoutMs ?? 600_000;
    let timedOut = false;
    const run = verifyDesign(design, open, { scripts, date, keyPrefix, ...(progress ? { onProgress: progress.onProgress } : {}) });
    try {
      report = await withTimeout(run, limitMs, 'verify timeout');
    } catch (e) {
      const ranOut = (e as NodeJS.ErrnoException).code === 'ETIMEDOUT' && (e as Error).message === 'verify timeout';
      // A call that failed because the server went may be reported before the connection's close event.
      if (!ranOut && open.lost() === undefined) await new Promise((r) => setTimeout(r, 300));
      if (!ranOut && open.lost() === undefined) throw e;
      timedOut = open.lost() === undefined;
      if (timedOut) {
        reachable = false;
        await open.close();
        await run.catch(() => undefined);
      }
      report = undefined as unknown as VerifyReport;
    }
    const lost = open.lost();
    if (timedOut || lost !== undefined) {
      progress?.clear();
      if (lost !== undefined && !reachable) await run.catch(() => undefined);
      const keys = spawned
        ? 'The redis-server verify started is stopped and its keys go with it.'
        : await leftKeys(
            open,
            keyPrefix,
            reachable &&
              open.lost() === lost &&
              (await open.waitReady(3000).then(
                () => true,
                () => false,
              )),
          );
      if (timedOut) throw new UserError('verifyTimedOut', { seconds: Math.round(limitMs / 1000), address: open.address, keys });
      throw new UserError('redisLost', { address: open.address, reason: lost as string, keys });
    }
    // The report says every key was deleted only if none is left under the prefix.
    if (!spawned) {
      const left = await withTimeout(open.scan(`${keyPrefix}*`), 10_000, 'timeout').catch(() => undefined);
      if (left === undefined || left.length > 0) {
        ctx.stderr(`WARNING: ${await leftKeys(open, keyPrefix, false)}\n`);
      }
    }
  } finally {
    progress?.clear();
    await store?.close();
    await spawned?.stop();
    stopSignals();
  }
  const seconds = Math.round((performance.now() - started) / 100) / 10;
  for (const w of loudWarnings(report)) ctx.stderr(`${w}\n`);

  const rel = (p: string): string => displayPath(ctx.cwd, p);
  const written: string[] = [];
  let unchanged = 0;
  if (opts.write) {
    const openapi = await loadOpenApi(ctx, answers, file);
    const { planned: doc } = await planOutputs(ctx, applyResults(design, resultsOf(report)), {
      answersFile: file,
      ...(openapi ? { openapi } : {}),
    });
    const sidecar = sidecarPath(file);
    const planned: PlannedFile[] = [
      { path: sidecar, content: sidecarText(report, file, answersText), root: path.dirname(sidecar), anchor: path.dirname(sidecar) },
      ...doc,
    ];
    const result = await writeOutputs(planned, { force: opts.force ?? false, display: rel });
    written.push(...result.written.map((p) => rel(p)));
    unchanged = result.unchanged.length;
  }
  if (opts.json) {
    ctx.stdout(`${JSON.stringify({ ...report, ...(opts.write ? { written, unchanged } : {}) }, null, 2)}\n`);
  } else {
    ctx.stdout(formatReport(report));
    ctx.stdout(`Took ${seconds} s.\n`);
    for (const w of written) ctx.stdout(`  wrote ${w}\n`);
    if (opts.write && unchanged > 0) ctx.stdout(`  ${unchanged} other file(s) unchanged\n`);
  }
  return report.passed ? 0 : 1;
}
