// Regenerates the checked-in example documents under examples/generated/ (fixed date):
// examples/generated/<name>/ holds the Markdown form, <name>/html/ the HTML form and <name>/code/ the enforcement code.
import { execFileSync } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const names = readdirSync(path.join(root, 'examples'))
  .filter((f) => f.endsWith('.answers.json'))
  .map((f) => f.replace(/\.answers\.json$/, ''));
const cli = path.join(root, 'dist', 'bin', 'rl-design.js');
for (const name of names) {
  const out = path.join(root, 'examples', 'generated', name);
  rmSync(out, { recursive: true, force: true });
  for (const [format, dir] of [
    ['markdown', out],
    ['html', path.join(out, 'html')],
  ]) {
    const code = format === 'markdown' ? ['--code-dir', path.join(out, 'code')] : [];
    execFileSync(
      process.execPath,
      [cli, 'generate', '--example', name, '--format', format, '--out', `${dir}/`, ...code, '--date', '2026-12-02'],
      {
        stdio: 'inherit',
      },
    );
  }
}
