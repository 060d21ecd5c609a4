/**
 * Counting instructions with valgrind's callgrind, for the benches' --instructions modes: a count
 * does not move with the machine's load the way a time does.
 *
 * A process started under `callgrindWrapper(file)` runs uninstrumented (about five times slower
 * than natively, not fifty) until `counting(pid, fn)` switches counting on around fn and reads
 * what was counted inside it. callgrind_control does the switching: it talks to the running
 * process, so the process needs no hooks of its own.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);

/**
 * The command prefix that runs a process under callgrind, not counting until told to.
 * only: function names; when given, only instructions executed inside them (and what they
 * call) are counted, e.g. a server's request handling without its timers.
 */
export function callgrindWrapper(outFile, only = []) {
  return [
    'valgrind',
    '--tool=callgrind',
    '--instr-atstart=no',
    // JIT-compiled code (Node's) is rewritten in place: callgrind must notice
    '--smc-check=all-non-file',
    ...only.map((fn) => `--toggle-collect=${fn}`),
    `--callgrind-out-file=${outFile}.%p`,
  ];
}

/**
 * What redis-server executes for its clients: reading and running their commands, writing the
 * replies; not its timers (serverCron, active expiry), which count by the second, not by the
 * request, and would charge a slower app more.
 */
export const REDIS_REQUEST_WORK = ['readQueryFromClient', 'writeToClient'];

/** The `totals:` of every dump the process has written so far (callgrind's part files). */
function totalOf(outFile, pid) {
  const prefix = `${basename(outFile)}.${pid}`;
  let total = 0;
  for (const name of readdirSync(dirname(outFile))) {
    if (name !== prefix && !name.startsWith(prefix + '.')) continue;
    const m = /^totals: (\d+)/m.exec(readFileSync(join(dirname(outFile), name), 'utf8'));
    if (m) total += Number(m[1]);
  }
  return total;
}

const control = (pid, ...args) => exec('callgrind_control', [...args, String(pid)]);

/**
 * Runs fn with counting on in the processes given ({ pid, outFile } each, started under
 * callgrindWrapper(outFile)), and returns fn's result and the instructions each executed
 * meanwhile, in the order given.
 */
export async function counting(processes, fn) {
  for (const p of processes) await control(p.pid, '--zero');
  for (const p of processes) await control(p.pid, '--instr=on');
  const result = await fn();
  for (const p of processes) await control(p.pid, '--instr=off');
  const before = processes.map((p) => totalOf(p.outFile, p.pid));
  for (const p of processes) await control(p.pid, '--dump');
  return { result, instructions: processes.map((p, i) => totalOf(p.outFile, p.pid) - before[i]) };
}
