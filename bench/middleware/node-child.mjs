#!/usr/bin/env node
/**
 * One limiter call of the Node decision bench in a process of its own, for run.mjs
 * --instructions (which starts it under callgrind):
 *   node bench/middleware/node-child.mjs <one-rule middleware dir> <saas-platform middleware dir> <redis port> <call> <auto-pipelining 0|1> <rule rate>
 * call: ours, rlf, raw, saas or rlfSaas (node-calls.mjs). Prints "ready"; then for each line
 * "<decisions> <in flight>" on stdin runs that many calls and prints "done"; "quit" ends it.
 */
import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import { admittedDecision, clientOptions, nodeCalls, run, VERIFIED } from './node-calls.mjs';

const [out, saasOut, port, name, pipelining, ruleRate] = process.argv.slice(2);
const client = new Redis(Number(port), '127.0.0.1', clientOptions(pipelining === '1'));
const { calls, close } = await nodeCalls(client, out, saasOut, Number(ruleRate));
const call = calls[name];
if (call === undefined) throw new Error(`no call ${name}: ${Object.keys(calls).join(', ')}`);
const verify = VERIFIED.has(name) ? admittedDecision : undefined;

let queue = Promise.resolve();
createInterface({ input: process.stdin }).on('line', (line) => {
  queue = queue.then(async () => {
    if (line === 'quit') {
      close();
      await client.quit();
      process.exit(0);
    }
    const [total, inFlight] = line.split(' ').map(Number);
    await run(call, total, inFlight, verify);
    process.stdout.write('done\n');
  });
});
process.stdout.write('ready\n');
