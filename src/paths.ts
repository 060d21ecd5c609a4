/** Where the package's own assets live, from src/, dist/ or the bundle in dist/bin/ alike. */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The nearest folder above this module that holds package.json and the lua/ and templates/ assets. */
function findPackageRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (['package.json', 'lua', 'templates'].every((f) => existsSync(path.join(dir, f)))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`rl-design: the package's own files (lua/, templates/) are missing above ${from}`);
  }
}

const PACKAGE_ROOT = findPackageRoot(path.dirname(fileURLToPath(import.meta.url)));
export const EXAMPLES_DIR = path.join(PACKAGE_ROOT, 'examples');
export const TEMPLATES_DIR = path.join(PACKAGE_ROOT, 'templates');
export const LUA_DIR = path.join(PACKAGE_ROOT, 'lua');
/** The shipped runtime: real TypeScript that generation copies into the user's code folder. */
export const RUNTIME_DIR = path.join(PACKAGE_ROOT, 'src', 'runtime');

/** Names of the built-in examples (`--example NAME`): examples/<name>.answers.json. */
export function exampleNames(): string[] {
  return readdirSync(EXAMPLES_DIR)
    .filter((f) => f.endsWith('.answers.json'))
    .map((f) => f.replace(/\.answers\.json$/, ''))
    .sort();
}
