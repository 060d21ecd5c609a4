/** Runs the built CLI (dist/bin/rl-design.js, the bundle) as a child process, the way users run it. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
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

/**
 * Generates with the built CLI into a fresh folder (Markdown, one file, the given date) and reads
 * back the document, every code file and the answers.
 */
export function generatedFiles(
  answersFile: string,
  date: string,
): { doc: string; files: { path: string; language: string; description: string; content: string }[]; answers: unknown } {
  const dir = tempDir();
  const r = runCli([
    'generate',
    '-a',
    answersFile,
    '--format',
    'markdown',
    '--layout',
    'single',
    '--out',
    path.join(dir, 'doc.md'),
    '--code-dir',
    path.join(dir, 'code'),
    '--date',
    date,
  ]);
  if (r.code !== 0) throw new Error(`generate exited ${r.code}: ${r.stderr}`);
  const code = path.join(dir, 'code');
  const files = readdirSync(code, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => {
      const rel = path.relative(code, path.join(d.parentPath, d.name)).split(path.sep).join('/');
      return { path: rel, language: '', description: '', content: readFileSync(path.join(code, rel), 'utf8') };
    });
  return { doc: readFileSync(path.join(dir, 'doc.md'), 'utf8'), files, answers: JSON.parse(readFileSync(answersFile, 'utf8')) };
}
