/** Runs the built CLI (dist/bin/rl-design.js, the bundle) as a child process, the way users run it. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT } from './examples.js';

export const CLI = path.join(ROOT, 'dist', 'bin', 'rl-design.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * rl-design's caches (compiled code, drawn diagrams) go to a folder of this test process, not
 * the user's ~/.cache: the first HTML run of a test file writes them, later ones use them.
 */
let cacheDir: string | undefined;

export function runCli(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): CliResult {
  cacheDir ??= tempDir('rl-design-test-cache-');
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd: options.cwd ?? ROOT,
    env: { ...process.env, RL_DESIGN_CACHE_DIR: cacheDir, ...options.env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

export function tempDir(prefix = 'rl-design-test-'): string {
  return mkdtempSync(path.join(tmpdir(), prefix));
}
