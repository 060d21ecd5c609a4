#!/usr/bin/env node
/**
 * The `rl-design` executable: turns on Node's compile cache (io/compile-cache.ts), then loads
 * and runs the CLI. In the published package the CLI (cli.ts and everything it imports) is one
 * CommonJS file beside this one, dist/bin/cli.cjs (scripts/bundle.mjs); from tsc's dist/ it is
 * the ES module cli.js. The cache must be on before the CLI is loaded, hence this small file.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { enableCompileCache } from './io/compile-cache.js';

type Cli = typeof import('./cli.js');

enableCompileCache();

const CLI_FILE = fileURLToPath(new URL('./cli.cjs', import.meta.url));

let cli: Cli;
try {
  // Not bundled: scripts/bundle.mjs keeps the import of cli.js out of the bundle.
  cli = existsSync(CLI_FILE) ? (createRequire(import.meta.url)(CLI_FILE) as Cli) : await import('./cli.js');
} catch (e) {
  // Say what failed, without the bundle's one long line of source that Node would print.
  process.stderr.write(`rl-design: could not start: ${(e as Error).message}\n`);
  if (process.argv.includes('--debug')) process.stderr.write(`${(e as Error).stack ?? ''}\n`);
  process.exit(70);
}
await cli.run(process.argv);
