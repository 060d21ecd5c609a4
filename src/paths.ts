/** Where the package's own assets live, from src/ or dist/ alike. */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const PACKAGE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const EXAMPLES_DIR = path.join(PACKAGE_ROOT, 'examples');
export const TEMPLATES_DIR = path.join(PACKAGE_ROOT, 'templates');
export const LUA_DIR = path.join(PACKAGE_ROOT, 'lua');
