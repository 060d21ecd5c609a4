/** A folder tree as a map of relative path -> sha256 (files), `-> target` (links) or `dir`, to compare before and after a run. */
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';

export function snapshot(root: string, skip: (rel: string) => boolean = () => false): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const abs = path.join(dir, name);
      const rel = path.relative(root, abs);
      if (skip(rel)) continue;
      const s = lstatSync(abs);
      if (s.isSymbolicLink()) out[rel] = `-> ${readlinkSync(abs)}`;
      else if (s.isDirectory()) {
        out[rel] = 'dir';
        walk(abs);
      } else out[rel] = createHash('sha256').update(readFileSync(abs)).digest('hex');
    }
  };
  walk(root);
  return out;
}
