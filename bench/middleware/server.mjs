#!/usr/bin/env node
/**
 * The Express app bench/middleware/run.mjs loads with autocannon, in its own process:
 *   node bench/middleware/server.mjs <bare|limited> <compiled middleware dir> <redis port>
 * Prints "listening <port>" once it accepts connections. `limited` mounts the generated
 * middleware (one GCRA rule per API key, enforced, metrics on the global prom-client registry)
 * with the recommended ioredis options (auto-pipelining on); `limited-plain` with ioredis
 * defaults.
 */
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import express from 'express';
import { Redis } from 'ioredis';

const [mode, dir, redisPort] = process.argv.slice(2);
const app = express();
if (mode === 'limited' || mode === 'limited-plain') {
  const { rateLimit } = await import(pathToFileURL(join(dir, 'express.js')).href);
  const redis = new Redis(Number(redisPort), '127.0.0.1', {
    enableAutoPipelining: mode === 'limited',
    maxRetriesPerRequest: 1,
  });
  app.use(
    rateLimit({
      redis,
      defaultMode: 'enforce',
      // the bench treats the header as an already verified API key id
      identify: (req) => ({ apiKey: req.headers['x-api-key'] }),
    }),
  );
}
app.get('/v1/items/:id', (req, res) => {
  res.json({ id: req.params.id, ok: true });
});
const server = app.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
// On each line "mark" read from stdin, reports the process's CPU time so far (user + system,
// microseconds) and the requests served so far: the bench takes differences between marks.
let served = 0;
server.on('request', () => served++);
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  for (const line of chunk.split('\n')) {
    if (line.trim() !== 'mark') continue;
    const cpu = process.cpuUsage();
    process.stdout.write(`mark ${cpu.user + cpu.system} ${served}\n`);
  }
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
