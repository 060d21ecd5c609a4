// Regenerates the checked-in example documents under examples/generated/ (fixed date).
import { execFileSync } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const names = readdirSync(path.join(root, 'examples'))
  .filter((f) => f.endsWith('.answers.json'))
  .map((f) => f.replace(/\.answers\.json$/, ''));
for (const name of names) {
  const out = path.join(root, 'examples', 'generated', name);
  rmSync(out, { recursive: true, force: true });
  execFileSync(process.execPath, [path.join(root, 'dist', 'cli.js'), 'generate', '--example', name, '--format', 'markdown', '--out', `${out}/`, '--date', '2026-12-02'], {
    stdio: 'inherit',
  });
}
