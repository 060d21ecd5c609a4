/**
 * The shipped runtime (src/runtime/): real TypeScript that generation copies verbatim into the
 * user's code folder, each file after one header line.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { RUNTIME_DIR } from '../paths.js';

/** The one header line every copied runtime file carries. */
export function runtimeHeader(toolVersion: string): string {
  return `// rl-design ${toolVersion} runtime, copied verbatim from the rl-design package. Do not edit: generate again.\n`;
}

const sources = new Map<string, string>();

/** A runtime file's text, exactly as in the package. */
export function runtimeSource(folder: 'middleware' | 'outbound', file: string): string {
  const key = `${folder}/${file}`;
  let text = sources.get(key);
  if (text === undefined) {
    text = readFileSync(path.join(RUNTIME_DIR, folder, file), 'utf8');
    sources.set(key, text);
  }
  return text;
}
