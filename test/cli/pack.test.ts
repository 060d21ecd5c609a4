import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import module from 'node:module';
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
    // the caches go here, not to the user's ~/.cache
    const cache = path.join(tempDir('rl-design-pack-cache-'), 'cache');
    const env = { ...process.env, RL_DESIGN_CACHE_DIR: cache };
    writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'scratch', version: '1.0.0', private: true }));
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--silent', path.join(packDir, tgz as string)], {
      cwd: app,
      encoding: 'utf8',
    });
    const help = spawnSync('npx', ['--no-install', 'rl-design', '--help'], { cwd: app, encoding: 'utf8', env });
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toContain('generate');
    const gen = spawnSync(
      'npx',
      [
        '--no-install',
        'rl-design',
        'generate',
        '--example',
        'saas-platform',
        '--format',
        'markdown',
        '--out',
        'docs/',
        '--code-dir',
        'code',
        '--date',
        '2026-12-02',
      ],
      {
        cwd: app,
        encoding: 'utf8',
        env,
      },
    );
    expect(gen.status, gen.stderr).toBe(0);
    const docs = readdirSync(path.join(app, 'docs'), { recursive: true }).map(String);
    expect(docs.some((f) => f.endsWith('.md'))).toBe(true);
    // the example's OpenAPI document ships with it: the code folder gets its overlay
    expect(readFileSync(path.join(app, 'code', 'openapi', 'rate-limits.overlay.yaml'), 'utf8')).toContain('overlay: 1.0.0');
    // HTML: the bundle's diagram worker and precompiled templates, from the installed package.
    const html = spawnSync(
      'npx',
      [
        '--no-install',
        'rl-design',
        'generate',
        '--example',
        'saas-platform',
        '--format',
        'html',
        '--layout',
        'single',
        '--out',
        'site/design.html',
        '--date',
        '2026-12-02',
      ],
      {
        cwd: app,
        encoding: 'utf8',
        env,
      },
    );
    expect(html.status, html.stderr).toBe(0);
    const page = readFileSync(path.join(app, 'site', 'design.html'), 'utf8');
    expect(page.match(/<svg\b/g)?.length).toBe(3);
    expect(page).toContain('Enforcement placement');
    // the installed package's caches: the drawn diagrams, and compiled code where Node has a
    // compile cache (22.1+)
    const hasCompileCache = typeof (module as { enableCompileCache?: unknown }).enableCompileCache === 'function';
    expect(readdirSync(cache).sort()).toEqual(hasCompileCache ? ['compile', 'svg'] : ['svg']);
    // Everything is bundled: installing rl-design installs nothing else.
    expect(readdirSync(path.join(app, 'node_modules')).filter((d) => !d.startsWith('.'))).toEqual(['rl-design']);
    expect(JSON.parse(readFileSync(path.join(app, 'node_modules', 'rl-design', 'package.json'), 'utf8')).dependencies ?? {}).toEqual({});
    const schema = spawnSync('npx', ['--no-install', 'rl-design', 'schema'], { cwd: app, encoding: 'utf8', env });
    expect(schema.stdout).toBe(readFileSync(path.join(ROOT, 'schemas/answers.schema.json'), 'utf8'));
    // init's answers file names a $schema that resolves in the installed package
    const init = spawnSync('npx', ['--no-install', 'rl-design', 'init', '--yes', '--format', 'markdown'], {
      cwd: app,
      encoding: 'utf8',
      input: '',
      env,
    });
    expect(init.status, init.stderr).toBe(0);
    const answers = JSON.parse(readFileSync(path.join(app, 'rate-limit.answers.json'), 'utf8'));
    expect(readFileSync(path.resolve(app, answers.$schema), 'utf8')).toBe(schema.stdout);
  }, 180_000);
});
