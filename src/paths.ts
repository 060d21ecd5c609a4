/** Where the package's own assets live, from src/ or dist/ alike. */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const PACKAGE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const EXAMPLES_DIR = path.join(PACKAGE_ROOT, 'examples');
export const TEMPLATES_DIR = path.join(PACKAGE_ROOT, 'templates');
export const LUA_DIR = path.join(PACKAGE_ROOT, 'lua');

/** Names of the built-in examples (`--example NAME`): examples/<name>.answers.json. */
export function exampleNames(): string[] {
  return readdirSync(EXAMPLES_DIR)
    .filter((f) => f.endsWith('.answers.json'))
    .map((f) => f.replace(/\.answers\.json$/, ''))
    .sort();
}
