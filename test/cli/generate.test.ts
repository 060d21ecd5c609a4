import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { exampleNames, EXAMPLES } from '../helpers/examples.js';
import { runCli, tempDir } from '../helpers/cli.js';

const DATE = '2026-12-02';

function listFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => path.relative(dir, path.join(d.parentPath, d.name)))
    .sort();
}

describe('rl-design generate (built binary)', () => {
  it('prints help with every command and exits 0', () => {
    const r = runCli(['--help']);
    expect(r.code).toBe(0);
    for (const cmd of ['generate', 'validate', 'schema']) expect(r.stdout).toContain(cmd);
    expect(runCli(['generate', '--help']).stdout).toContain('--layout');
  });

  it('writes a single Markdown file and is byte-identical on a second run with the same date', () => {
    const dir = tempDir();
    const out = path.join(dir, 'design.md');
    const args = ['generate', '--example', 'consumer-auth', '--format', 'markdown', '--layout', 'single', '--out', out, '--date', DATE];
    const first = runCli(args);
    expect(first.code, first.stderr).toBe(0);
    const a = readFileSync(out, 'utf8');
    expect(a).toContain('2026-12-02');
    const second = runCli(args);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('unchanged');
    expect(readFileSync(out, 'utf8')).toBe(a);
  });

  it('honours SOURCE_DATE_EPOCH when --date is absent', () => {
    const dir = tempDir();
    const out = path.join(dir, 'd.md');
    const r = runCli(['generate', '--example', 'minimal-generic', '--format', 'md', '--out', out], { env: { SOURCE_DATE_EPOCH: '1767225600' } });
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(out, 'utf8')).toContain('2026-01-01');
  });

  it('writes the folder form with an index and numbered section files', () => {
    const dir = tempDir();
    const r = runCli(['generate', '--example', 'saas-platform', '--format', 'markdown', '--layout', 'folder', '--out', path.join(dir, 'design'), '--date', DATE]);
    expect(r.code, r.stderr).toBe(0);
    const files = listFiles(path.join(dir, 'design')).filter((f) => !f.startsWith('.'));
    expect(files).toContain('README.md');
    const sections = files.filter((f) => /^\d\d-.*\.md$/.test(f));
    expect(sections.length).toBeGreaterThanOrEqual(4);
    expect(sections.length).toBeLessThanOrEqual(8);
  });

  it('never overwrites a file the user edited, unless --force', () => {
    const dir = tempDir();
    const out = path.join(dir, 'design.md');
    const args = ['generate', '--example', 'minimal-generic', '--format', 'markdown', '--out', out, '--date', DATE];
    expect(runCli(args).code).toBe(0);
    writeFileSync(out, 'my own notes\n');
    const refused = runCli([...args, '--date', '2026-12-03']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/changed since rl-design wrote it.*--force/s);
    expect(readFileSync(out, 'utf8')).toBe('my own notes\n');
    const forced = runCli([...args, '--force']);
    expect(forced.code).toBe(0);
    expect(readFileSync(out, 'utf8')).toContain('inventory-service');
  });

  it('never overwrites a file rl-design did not write', () => {
    const dir = tempDir();
    const out = path.join(dir, 'README.md');
    writeFileSync(out, 'project readme\n');
    const r = runCli(['generate', '--example', 'minimal-generic', '--format', 'markdown', '--out', out, '--date', DATE]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/did not write it/);
    expect(readFileSync(out, 'utf8')).toBe('project readme\n');
  });

  it('rejects invalid answers with one message per problem, exit 2, and writes nothing', () => {
    const dir = tempDir();
    const answers = path.join(dir, 'a.json');
    writeFileSync(answers, JSON.stringify({ goals: ['fairness'], stack: { gateway: 'haproxy' }, endpoints: [{ name: 'x', route: 'x', class: 'read' }] }));
    const out = path.join(dir, 'out');
    const r = runCli(['generate', '-a', answers, '--format', 'markdown', '--out', out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('$.stack.gateway: must be one of');
    expect(r.stderr).toContain('$.endpoints[0].route: must start with "/"');
    expect(r.stderr).not.toMatch(/at .*\.js:\d+/); // no stack trace
    expect(existsSync(out)).toBe(false);
  });

  it('rejects bad options with exit 2', () => {
    expect(runCli(['generate', '--example', 'minimal-generic', '--format', 'pdf']).code).toBe(2);
    expect(runCli(['generate', '--example', 'minimal-generic', '--layout', 'zigzag']).code).toBe(2);
    expect(runCli(['generate', '--example', 'nope']).stderr).toMatch(/unknown example "nope"; choose one of/);
    expect(runCli(['generate', '--example', 'minimal-generic', '--date', '2026-02-30']).code).toBe(2);
    expect(runCli(['frobnicate']).code).toBe(2);
    const missing = runCli(['validate', '-a', 'no-such-file.json']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/Answers file not found: no-such-file.json/);
  });

  it('keeps the checked-in example documents current (run `npm run examples` when this fails)', () => {
    for (const name of exampleNames()) {
      const dir = tempDir();
      const r = runCli(['generate', '--example', name, '--format', 'markdown', '--out', `${dir}/`, '--date', DATE]);
      expect(r.code, r.stderr).toBe(0);
      const fresh = listFiles(dir).filter((f) => !f.startsWith('.'));
      const checkedInDir = path.join(EXAMPLES, 'generated', name);
      const checkedIn = listFiles(checkedInDir).filter((f) => !f.startsWith('.'));
      expect(checkedIn, name).toEqual(fresh);
      for (const f of fresh) {
        expect(readFileSync(path.join(checkedInDir, f), 'utf8'), `${name}/${f}`).toBe(readFileSync(path.join(dir, f), 'utf8'));
      }
    }
  });
});
