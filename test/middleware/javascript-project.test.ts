/**
 * A JavaScript project (the review answers: Express, language JavaScript) gets TypeScript
 * source; the code README and the document say how to compile it. The command they print is
 * run as printed (the repo's tsc standing in for npx's) in a CommonJS package, and the entry
 * it names is required by plain JavaScript and mounted in a real Express server against a real
 * redis-server: the tenant's bucket answers with its headers and a 429 once drained.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import express from 'express';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Answers } from '../../src/answers/schema.js';
import { generateCode } from '../../src/codegen/index.js';
import { checkDesign } from '../../src/constraints/index.js';
import { buildDesign } from '../../src/design/build.js';
import { renderMarkdown } from '../../src/render/markdown/index.js';
import { ROOT } from '../helpers/examples.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';
import { TSC } from './harness.js';

const raw = JSON.parse(readFileSync(path.join(ROOT, 'test/fixtures/review/express-cloudflare.answers.json'), 'utf8'));
delete raw.$schema;
const design = buildDesign(Answers.parse(raw), { date: '2026-12-03' });
const files = generateCode(design);
const readme = files.find((f) => f.path === 'README.md')!.content;

let dir: string;
let server: RedisServer;
let redis: Redis;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'rl-js-project-'));
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ private: true })); // CommonJS
  for (const f of files) {
    mkdirSync(path.dirname(path.join(dir, f.path)), { recursive: true });
    writeFileSync(path.join(dir, f.path), f.content);
  }
  server = await startRedis();
  redis = new Redis({ host: server.host, port: server.port, lazyConnect: true, maxRetriesPerRequest: 0 });
  await redis.connect();
}, 120_000);
afterAll(async () => {
  redis?.disconnect();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('a JavaScript project', () => {
  const command = /```sh\n(npx -p typescript tsc [^\n]+)\n```/.exec(readme)?.[1];
  const entry = /then import `([^`]+)`/.exec(readme)?.[1];

  it('is told, in the code README and the document, to compile the TypeScript once and what to import', () => {
    expect(command).toBe(
      'npx -p typescript tsc --outDir js --module nodenext --target es2022 --skipLibCheck middleware/*.ts outbound/*.ts',
    );
    expect(entry).toBe('js/middleware/express.js');
    const md = renderMarkdown({ design, checks: checkDesign(design, files), codeFiles: files }, { layout: 'single' })[0]!.content;
    expect(md).toContain('**In a JavaScript project.**');
    expect(md).toContain(`\`${command}\``);
    expect(md).toContain(`import \`${entry}\``);
  });

  it('compiles with the printed command, and plain JavaScript mounts the entry it names in Express', async () => {
    const args = command!.replace(/^npx -p typescript tsc /, '').split(' ');
    const sources = args.filter((a) => a.includes('*'));
    const expanded = sources.flatMap((glob) => {
      const folder = glob.slice(0, glob.indexOf('/'));
      return files.filter((f) => f.path.startsWith(`${folder}/`) && f.path.endsWith('.ts')).map((f) => f.path);
    });
    await promisify(execFile)(process.execPath, [TSC, ...args.filter((a) => !a.includes('*')), ...expanded], {
      cwd: dir,
      timeout: 120_000,
    });

    const { rateLimit } = createRequire(path.join(dir, 'package.json'))(`./${entry}`) as {
      rateLimit: (o: Record<string, unknown>) => express.RequestHandler;
    };
    const app = express();
    app.use(
      rateLimit({
        redis,
        defaultMode: 'enforce',
        identities: { user: () => 'u-1', tenant: (req: express.Request) => String(req.headers['x-org'] ?? '') || undefined },
        identify: () => ({}),
      }),
    );
    app.get('/api/orgs/:org/projects', (_req, res) => {
      res.json({ ok: true });
    });
    const listener = app.listen(0, '127.0.0.1');
    await new Promise((r) => listener.once('listening', r));
    const port = (listener.address() as AddressInfo).port;
    try {
      const get = () => fetch(`http://127.0.0.1:${port}/api/orgs/o1/projects`, { headers: { 'x-org': 'org-1' } });
      const first = await get();
      expect(first.status).toBe(200);
      expect(first.headers.get('ratelimit-limit')).toBe('500');
      expect(first.headers.get('ratelimit-remaining')).toBe('499');
      let last = first;
      for (let i = 0; i < 5000 && last.status === 200; i++) last = await get();
      expect(last.status).toBe(429);
      expect(Number(last.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    } finally {
      await new Promise((r) => listener.close(r));
    }
  }, 120_000);
});
