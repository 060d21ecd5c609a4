#!/usr/bin/env node
/**
 * The `rl-design` executable. In the published package the CLI (cli.ts and everything it
 * imports) is one CommonJS file, dist/bin/cli.cjs, compiled through the V8 code cache
 * (io/code-cache.ts): on Node 20 nothing else keeps compiled code between runs, and
 * compiling the CLI was a good part of every run's time. The cache is written when the
 * process exits, after a run that had none it could use (so it holds the functions that
 * run compiled too), one per command. Elsewhere (tsc's dist/) it imports cli.js.
 *
 * `generate` draws its diagrams in a worker thread (render/diagrams/beautiful-job.ts). Loading
 * the layout engine is the slowest step of a run, so the worker is spawned here, first, unless
 * the arguments rule diagrams out; it loads on the other core while this thread loads the
 * CLI. Other commands spawn nothing.
 */
import { existsSync } from 'node:fs';
import module from 'node:module';
import { fileURLToPath } from 'node:url';
import { codeCacheDir, requireWithCodeCache } from './io/code-cache.js';
import { lendImport } from './io/import-module.js';
import { startBeautifulMermaid } from './render/diagrams/beautiful-job.js';

type Cli = typeof import('./cli.js');

// Node 22.1+ keeps compiled ES modules between runs too (these small ones; a no-op on Node 20).
(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();

// The CLI's own import() does not work inside vm.Script code: it borrows this module's.
lendImport((specifier) => import(specifier));

const argv = process.argv;
const diagrams =
  argv[2] === 'generate' && !argv.some((a) => /(^|=)(markdown|md|mermaid-cli)$|\.md$/.test(a)) ? startBeautifulMermaid() : undefined;

const CLI_FILE = fileURLToPath(new URL('./cli.cjs', import.meta.url));

async function loadCli(): Promise<Cli> {
  // Not bundled: scripts/bundle.mjs keeps the import of cli.js out of the bundle.
  if (!existsSync(CLI_FILE)) return import('./cli.js');
  // One cache per command: each holds the functions its command compiled.
  const command = ['init', 'generate', 'validate', 'verify', 'schema'].includes(argv[2] ?? '') ? argv[2] : 'other';
  const cli = requireWithCodeCache<Cli>(CLI_FILE, codeCacheDir(), command);
  if (cli.needsSave) process.once('exit', () => cli.save());
  return cli.exports;
}

let cli: Cli;
try {
  cli = await loadCli();
} catch (e) {
  // Say what failed, without the bundle's one long line of source that Node would print.
  process.stderr.write(`rl-design: could not start: ${(e as Error).message}\n`);
  if (argv.includes('--debug')) process.stderr.write(`${(e as Error).stack ?? ''}\n`);
  diagrams?.cancel();
  process.exit(70);
}
await cli.run(argv, diagrams);
