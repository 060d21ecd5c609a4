/**
 * A real nginx for the gateway tests, isolated from the system's: its own prefix in a temp
 * directory (config, pid, logs, temp paths), `-p`/`-c`/`-e` so /etc/nginx is never read,
 * one process (master_process off), a free loopback port. A missing nginx fails loudly:
 * scripts/setup.sh installs it (apt-get install -y nginx).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll } from 'vitest';
import type { CodeFile } from '../../../src/codegen/types.js';
import { freePort } from '../../helpers/redis.js';

const MISSING = 'nginx was not found (PATH, /usr/sbin). The gateway tests need it: apt-get install -y nginx';

export function nginxBinary(): string {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/local/sbin', '/usr/local/nginx/sbin'];
  for (const d of dirs) {
    const candidate = join(d, 'nginx');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // keep looking
    }
  }
  throw new Error(MISSING);
}

export interface NginxPrefix {
  dir: string;
  port: number;
  conf: string;
  remove(): void;
}

/**
 * Writes the generated gateway files and a minimal nginx.conf that includes them the way the
 * generated header says: nginx.conf inside http {}, nginx-server.conf inside server {}. The
 * location serves a static file, so limit_req (preaccess phase) runs before the content.
 */
export async function nginxPrefix(
  files: readonly CodeFile[],
  edit: (content: string, path: string) => string = (c) => c,
): Promise<NginxPrefix> {
  const dir = mkdtempSync(join(tmpdir(), 'rl-nginx-'));
  const port = await freePort();
  mkdirSync(join(dir, 'gateway'));
  mkdirSync(join(dir, 'www'));
  mkdirSync(join(dir, 'logs'));
  writeFileSync(join(dir, 'www', 'ok.txt'), 'ok\n');
  for (const f of files) writeFileSync(join(dir, f.path), edit(f.content, f.path));
  const conf = join(dir, 'nginx.conf');
  writeFileSync(
    conf,
    [
      'daemon off;',
      'master_process off;',
      'worker_processes 1;',
      `pid ${join(dir, 'nginx.pid')};`,
      `error_log ${join(dir, 'logs', 'error.log')} warn;`,
      'events { worker_connections 1024; }',
      'http {',
      `    client_body_temp_path ${join(dir, 'body')};`,
      `    proxy_temp_path ${join(dir, 'proxy')};`,
      `    fastcgi_temp_path ${join(dir, 'fastcgi')};`,
      `    uwsgi_temp_path ${join(dir, 'uwsgi')};`,
      `    scgi_temp_path ${join(dir, 'scgi')};`,
      '    access_log off;',
      `    include ${join(dir, 'gateway', 'nginx.conf')};`,
      '    server {',
      `        listen 127.0.0.1:${port};`,
      `        include ${join(dir, 'gateway', 'nginx-server.conf')};`,
      '        location / {',
      `            root ${join(dir, 'www')};`,
      '            default_type text/plain;',
      '            try_files /ok.txt =404;',
      '        }',
      '    }',
      '}',
      '',
    ].join('\n'),
  );
  return { dir, port, conf, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** `nginx -t` on the prefix: { ok, output }. */
export async function nginxTest(prefix: NginxPrefix): Promise<{ ok: boolean; output: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(
      nginxBinary(),
      ['-t', '-p', prefix.dir, '-c', prefix.conf, '-e', join(prefix.dir, 'logs', 'error.log')],
      { timeout: 20_000 },
    );
    return { ok: true, output: `${stdout}${stderr}` };
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    return { ok: false, output: `${e.stdout ?? ''}${e.stderr ?? ''}${e.message}` };
  }
}

export interface RunningNginx {
  port: number;
  stop(): Promise<void>;
}

/** Starts nginx on the prefix and waits until it answers. */
export async function startNginx(prefix: NginxPrefix): Promise<RunningNginx> {
  const child: ChildProcess = spawn(nginxBinary(), ['-p', prefix.dir, '-c', prefix.conf, '-e', join(prefix.dir, 'logs', 'error.log')], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited (${child.exitCode}): ${output}`);
    try {
      await get(prefix.port, '/__ready');
      break;
    } catch {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`nginx did not start: ${output}`);
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  return {
    port: prefix.port,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One HTTP request to loopback, headers passed verbatim (X-Forwarded-For included). */
export function get(port: number, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers: { connection: 'close', ...headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.setTimeout(5000, () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

/** Fires `count` requests at once; returns their statuses. */
export async function burst(
  port: number,
  count: number,
  path: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<Reply[]> {
  return Promise.all(Array.from({ length: count }, () => get(port, path, headers, method)));
}

/** A describe block's nginx: the prefix and the running server, set up before its tests and removed after. */
export interface NginxForTests {
  readonly prefix: NginxPrefix;
  readonly nginx: RunningNginx;
}

/** Writes the files (edited as nginxPrefix edits them) and runs nginx on them for the tests of the calling describe block. */
export function useRunningNginx(files: readonly CodeFile[], edit?: (content: string, path: string) => string): NginxForTests {
  const store = {} as { prefix: NginxPrefix; nginx: RunningNginx };
  beforeAll(async () => {
    store.prefix = await nginxPrefix(files, edit);
    store.nginx = await startNginx(store.prefix);
  });
  afterAll(async () => {
    await store.nginx?.stop();
    store.prefix?.remove();
  });
  return store;
}
