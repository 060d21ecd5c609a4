/**
 * The code README of a Go API (test/fixtures/review/go-envoy-anonymous): its EVALSHA lines,
 * placeholders filled in, run as written on a real 3-master Redis Cluster, answer what the
 * shipped runtime's own arithmetic says; a Node design gets no such section.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cluster } from 'ioredis';
import { Answers } from '../../src/answers/schema.js';
import { generateCode } from '../../src/codegen/index.js';
import { buildDesign } from '../../src/design/build.js';
import { luaScript } from '../../src/lua.js';
import { gcraNumbers } from '../../src/runtime/middleware/store.js';
import { DATE, exampleAnswers, exampleDesign } from '../helpers/examples.js';
import { startRedisCluster, type RedisClusterHandle } from '../helpers/redis.js';

const raw = JSON.parse(readFileSync(new URL('../fixtures/review/go-envoy-anonymous.answers.json', import.meta.url), 'utf8'));
const design = buildDesign(Answers.parse(raw), { date: DATE });
const readme = generateCode(design).find((f) => f.path === 'README.md')!.content;

/** The backticked EVALSHA commands of the README, in order. */
function commands(text: string): string[] {
  return [...text.matchAll(/`(EVALSHA [^`]+)`/g)].map((m) => m[1]!);
}

let cluster: RedisClusterHandle;
let client: Cluster;

beforeAll(async () => {
  cluster = await startRedisCluster();
  client = new Cluster(
    cluster.nodes.map((n) => ({ host: n.host, port: n.port })),
    { redisOptions: { maxRetriesPerRequest: 1 } },
  );
  await new Promise((resolve) => client.once('ready', resolve));
  expect(client.nodes('master')).toHaveLength(3);
  for (const node of client.nodes('master')) {
    for (const name of ['gcra', 'sliding-window-log', 'outbound-bucket'] as const) await node.script('LOAD', luaScript(name).source);
  }
}, 60_000);

afterAll(async () => {
  await client?.quit().catch(() => undefined);
  await cluster?.stop();
});

async function run(command: string, fill: Record<string, string>): Promise<unknown> {
  let text = command;
  for (const [placeholder, value] of Object.entries(fill)) text = text.split(placeholder).join(value);
  expect(text).not.toMatch(/<[^>]*>/);
  const [name, ...args] = text.split(' ');
  return client.call(name!, ...args);
}

describe('the code README of a Go API', () => {
  it("names the keys a caller without the rule's identity is counted under, as the runtime writes them", () => {
    // the runtime keeps the rule's own label and adds the other identity's after "~" (keys.ts, fallbackLabel)
    expect(readme).toContain('rl:\\{ak\\~s:\\<session-id\\>\\}:req:partner');
    expect(readme).toContain('rl:\\{ak\\~ip:\\<client-ip\\>\\}:req:partner');
    expect(readme).not.toContain('`{s:<session-id>}`');
  });

  it('says how to call each script, with the KEYS and ARGV the scripts read, and the headers to send', () => {
    expect(readme).toContain('## Calling the scripts from Go');
    const { interval, tolerance } = gcraNumbers(200, 50, 1000);
    expect(readme).toContain(
      `\`EVALSHA ${luaScript('gcra').sha1} 1 rl:{ak:<api-key-id>}:req:partner ${tolerance} <cost x ${interval}> ${interval}\``,
    );
    expect(readme).toContain('save-query 2 (ARGV[2] 40000)');
    expect(readme).toContain(
      `\`EVALSHA ${luaScript('sliding-window-log').sha1} 2 rl:{auth:login}:un:<sha256(username)> rl:{auth:login}:ip:<client-ip> 10 900000 5 60000 <cost>\``,
    );
    // the Partner row covers the anonymous reads too (a partner's key counts there), split by fail mode
    expect(readme).toContain('`RateLimit-Policy: "fairness-partner-fail-closed";q=200;w=4`');
    expect(readme).toContain('`RateLimit: "fairness-partner-fail-closed";r=<remaining>;t=<ceil(reset_ms / 1000)>`');
    expect(readme).toContain('`RateLimit-Policy: "fairness-partner-fail-open";q=200;w=4`');
    expect(readme).toContain('fail closed, status 503 with `Retry-After: 5`');
    expect(readme).toContain('`ratelimit.auth-login-per-identity.mode`, `ratelimit.auth-login-per-ip.mode`');
    expect(readme).toContain('`ratelimit_throttled_total` (counter; `rule`, `mode`)');
    expect(readme).toContain('a call the bucket held back counts in `ratelimit_throttled_total` with mode="enforce"');
    expect(readme).toContain('`ratelimit_outbound_provider_429_total` (counter; `provider`)');
    expect(commands(readme)).toHaveLength(8);
    // both halves spend one bucket: the same call
    expect(commands(readme)[0]).toBe(commands(readme)[1]);
  });

  it('runs as written on a Redis Cluster: one slot per call, the replies the guide explains', async () => {
    const [gcra, , login, loginNoName, geoReserve, geoPause] = commands(readme);
    // gcra: a fresh bucket admits a save-query (cost 2) with ahead = increment
    const first = await run(gcra!, { '<api-key-id>': 'partner-7', '<cost x 20000>': '40000' });
    expect(first).toBe(40000);
    // the dual-key login call: both keys in one slot (no CROSSSLOT), admitted, 4 left (the per-IP row's 5 - 1)
    const fill = { '<sha256(username)>': 'a'.repeat(64), '<client-ip>': '203.0.113.9', '<cost>': '1' };
    expect(await run(login!, fill)).toEqual([1, 4, 0, 900000, 0]);
    for (let i = 0; i < 4; i++) await run(loginNoName!, fill);
    // the IP log is full: refused by key 2 of the dual call (the per-IP rule)
    const refused = (await run(login!, fill)) as number[];
    expect(refused[0]).toBe(0);
    expect(refused[4]).toBe(2);
    expect(refused[2]).toBeGreaterThan(0);
    // outbound: a reservation now, then a pause books nothing for the provider's Retry-After
    expect(await run(geoReserve!, { '<cost>': '1', '<max_wait_ms>': '0' })).toEqual([1, 0, 0, expect.any(Number)]);
    const paused = (await run(geoPause!, { '<retry_after_ms>': '30000' })) as number[];
    expect(paused[0]).toBe(1);
    expect(paused[1]).toBeGreaterThanOrEqual(30000);
  });

  it('the alert rules of a Go API name its port as the source of the middleware and outbound series', () => {
    const alerts = generateCode(design).find((f) => f.path === 'monitoring/ratelimit-alerts.yaml')!.content;
    expect(alerts).toContain('# - the Go port of the generated middleware, under these names');
    expect(alerts).toContain('# - the Go port of the generated outbound client, under these names');
    expect(alerts).not.toContain('prom-client registry');
  });

  it('names each period once and explains every hashed account placeholder (a Python design with three auth flows)', () => {
    const saas = exampleAnswers('saas-platform') as Record<string, any>;
    const python = buildDesign(Answers.parse({ ...saas, stack: { ...saas.stack, language: 'Python', framework: 'other' } }), {
      date: DATE,
    });
    const text = generateCode(python).find((f) => f.path === 'README.md')!.content;
    expect(text).toContain('## Calling the scripts from Python');
    expect(text).toContain('rl:{auth:password-reset}:un:<sha256(e-mail-address)>');
    expect(text).toContain('`<sha256(...)>` the hex sha256 of the account name tried');
    expect(text).not.toMatch(/(\d+ s) or \1/);
  });

  it('is left out where the runtime mounts in the application itself', () => {
    const node = generateCode(exampleDesign('saas-platform')).find((f) => f.path === 'README.md')!.content;
    expect(node).not.toContain('## Calling the scripts from');
  });
});
