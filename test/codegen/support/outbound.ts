/**
 * Compiles the generated outbound client the way a user's project would: a scratch
 * directory, the repo's TypeScript, `--strict` plus the stricter options many projects add,
 * and a second file that hands it an ioredis Redis and Cluster. Returns the compiled module.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { CodeFile } from '../../../src/codegen/types.js';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { ROOT } from '../../helpers/examples.js';

export const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

export const STRICT_OPTIONS = {
  target: 'ES2022',
  module: 'NodeNext',
  moduleResolution: 'NodeNext',
  strict: true,
  noUncheckedIndexedAccess: true,
  exactOptionalPropertyTypes: true,
  noImplicitOverride: true,
  noImplicitReturns: true,
  noFallthroughCasesInSwitch: true,
  noUnusedLocals: true,
  noUnusedParameters: true,
  verbatimModuleSyntax: true,
  skipLibCheck: true,
  types: ['node'],
  outDir: 'dist',
};

/** A consumer of the client: ioredis clients fit its ScriptClient, errors narrow by code. */
const USE = `import { Cluster, Redis } from 'ioredis';
import * as promClient from 'prom-client';
import { OutboundClient, OutboundLimitError, outboundMetrics, PROVIDERS, type OutboundEvent, type ProviderName, type ScriptClient } from './client.js';

// prom-client's module and registries fit the metrics adapter as they are
export function prometheus(registry: promClient.Registry): (event: OutboundEvent) => void {
  return outboundMetrics(promClient, registry);
}

export function prometheusGlobal(): (event: OutboundEvent) => void {
  return outboundMetrics(promClient);
}

export function clients(url: string): { single: ScriptClient; cluster: ScriptClient } {
  const single: ScriptClient = new Redis(url, { lazyConnect: true });
  const cluster: ScriptClient = new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true });
  return { single, cluster };
}

export async function callFirst(client: OutboundClient): Promise<string> {
  const first = Object.keys(PROVIDERS)[0] as ProviderName;
  try {
    return await client.schedule(first, async () => 'called');
  } catch (error) {
    if (error instanceof OutboundLimitError) return error.code;
    throw error;
  }
}
`;

export interface Compiled {
  dir: string;
  output: string;
  /** The compiled client module. */
  module: Record<string, any>;
  remove(): void;
}

export async function compileClient(files: readonly CodeFile[]): Promise<Compiled> {
  const dir = mkdtempSync(join(tmpdir(), 'rl-outbound-'));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  for (const f of files) writeFileSync(join(dir, basename(f.path)), f.content);
  writeFileSync(join(dir, 'use.ts'), USE);
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: STRICT_OPTIONS, files: [...files.map((f) => basename(f.path)), 'use.ts'] }, null, 2),
  );
  let output = '';
  try {
    const r = await promisify(execFile)(process.execPath, [TSC, '-p', dir], { cwd: dir, timeout: 120_000 });
    output = `${r.stdout}${r.stderr}`;
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`tsc --strict rejected the generated client:\n${e.stdout ?? ''}${e.stderr ?? ''}${e.message}`);
  }
  const module = (await import(pathToFileURL(join(dir, 'dist', 'client.js')).href)) as Record<string, any>;
  return { dir, output, module, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
