import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/examples.js';
import { tempDir } from '../helpers/cli.js';

describe('packed tarball', () => {
  it('installs into an empty folder and runs through npx', () => {
    const packDir = tempDir('rl-design-pack-');
    execFileSync('npm', ['pack', '--pack-destination', packDir, '--silent'], { cwd: ROOT, encoding: 'utf8' });
    const tgz = readdirSync(packDir).find((f) => f.endsWith('.tgz'));
    expect(tgz).toBeDefined();
    const app = tempDir('rl-design-app-');
    writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'scratch', version: '1.0.0', private: true }));
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--silent', path.join(packDir, tgz as string)], { cwd: app, encoding: 'utf8' });
    const help = spawnSync('npx', ['--no-install', 'rl-design', '--help'], { cwd: app, encoding: 'utf8' });
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toContain('generate');
    const gen = spawnSync('npx', ['--no-install', 'rl-design', 'generate', '--example', 'saas-platform', '--format', 'markdown', '--out', 'docs/', '--date', '2026-12-02'], {
      cwd: app,
      encoding: 'utf8',
    });
    expect(gen.status, gen.stderr).toBe(0);
    const docs = readdirSync(path.join(app, 'docs'), { recursive: true }).map(String);
    expect(docs.some((f) => f.endsWith('.md'))).toBe(true);
    const schema = spawnSync('npx', ['--no-install', 'rl-design', 'schema'], { cwd: app, encoding: 'utf8' });
    expect(schema.stdout).toBe(readFileSync(path.join(ROOT, 'schemas/answers.schema.json'), 'utf8'));
  }, 180_000);
});
