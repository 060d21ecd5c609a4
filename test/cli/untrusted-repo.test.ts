/**
 * rl-design run inside a repository someone else wrote: planted symbolic links, an answers
 * file that names paths outside the project, two runs at once, the leftovers of a killed run.
 * Every case runs the built binary in a real folder and checks the exit code, the message
 * and, by checksums of the whole tree before and after, that nothing outside the intended
 * folder changed.
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  watch,
  unlinkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, runCli, tempDir } from '../helpers/cli.js';
import { EXAMPLES } from '../helpers/examples.js';
import { snapshot } from '../helpers/tree.js';

const DATE = '2026-12-02';
const MANIFEST = '.rl-design-manifest.json';
const sha = (text: string | Buffer): string => createHash('sha256').update(text).digest('hex');

/** world/repo (the project, holding an answers file), world/outside (files the run must not touch), world/home. */
function world(
  example = 'minimal-generic',
  answersPatch?: (a: Record<string, unknown>) => void,
): { root: string; repo: string; outside: string; home: string; victim: string } {
  const root = tempDir('rl-design-untrusted-');
  const repo = path.join(root, 'repo');
  const outside = path.join(root, 'outside');
  const home = path.join(root, 'home');
  for (const d of [repo, outside, home]) mkdirSync(d);
  const answers = JSON.parse(readFileSync(path.join(EXAMPLES, `${example}.answers.json`), 'utf8')) as Record<string, unknown>;
  delete answers.$schema;
  answersPatch?.(answers);
  writeFileSync(path.join(repo, 'rate-limit.answers.json'), `${JSON.stringify(answers, null, 2)}\n`);
  // the example's OpenAPI document (openapi.path is relative to the answers file)
  for (const f of readdirSync(EXAMPLES).filter((n) => n.startsWith(`${example}.openapi.`)))
    copyFileSync(path.join(EXAMPLES, f), path.join(repo, f));
  const victim = path.join(outside, 'bashrc');
  writeFileSync(victim, 'export PS1="$ "\n');
  writeFileSync(path.join(home, '.bashrc'), 'alias ll="ls -l"\n');
  return { root, repo, outside, home, victim };
}

function run(w: { repo: string; home: string }, args: string[]): { code: number; stdout: string; stderr: string } {
  return runCli(['generate', '--date', DATE, ...args], { cwd: w.repo, env: { HOME: w.home } });
}

describe('symbolic links in the repository are never followed', () => {
  it('a manifest that links to a file outside: exit 2 naming the link, the target unchanged, with or without --force', () => {
    const w = world();
    const out = path.join(w.repo, 'docs', 'rate-limit-design');
    mkdirSync(out, { recursive: true });
    symlinkSync(w.victim, path.join(out, MANIFEST));
    const before = snapshot(w.root);
    for (const force of [[], ['--force']]) {
      const r = run(w, [...force]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`docs/rate-limit-design/${MANIFEST}`);
      expect(r.stderr).toContain('symbolic link');
      expect(snapshot(w.root)).toEqual(before);
    }
  });

  it('a document file that is a link: refused with --force and with a forged manifest vouching for the target', () => {
    const w = world();
    const out = path.join(w.repo, 'docs', 'rate-limit-design');
    mkdirSync(out, { recursive: true });
    const doc = path.join(out, 'rate-limit-design.md');
    symlinkSync(w.victim, doc);
    writeFileSync(
      path.join(out, MANIFEST),
      JSON.stringify({ tool: 'rl-design', files: { 'rate-limit-design.md': sha(readFileSync(w.victim)) } }),
    );
    const before = snapshot(w.root);
    for (const force of [[], ['--force']]) {
      const r = run(w, force);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain('Refusing to write through docs/rate-limit-design/rate-limit-design.md: it is a symbolic link');
      expect(snapshot(w.root)).toEqual(before);
    }
  });

  it('a linked folder inside the document folder (assets -> outside) and a linked parent (docs -> outside): refused, nothing written outside', () => {
    const w = world('saas-platform');
    const site = path.join(w.repo, 'site');
    mkdirSync(site);
    symlinkSync(w.outside, path.join(site, 'assets'));
    let before = snapshot(w.root);
    let r = run(w, ['--format', 'html', '--layout', 'folder', '--out', 'site/']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('Refusing to write through site/assets: it is a symbolic link');
    expect(snapshot(w.root)).toEqual(before);

    const w2 = world();
    symlinkSync(w2.outside, path.join(w2.repo, 'docs'));
    before = snapshot(w2.root);
    r = run(w2, ['--force']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('Refusing to write through docs: it is a symbolic link');
    expect(snapshot(w2.root)).toEqual(before);
  });

  it('init refuses an answers file that is a link', () => {
    const w = world();
    const answers = path.join(w.repo, 'rate-limit.answers.json');
    unlinkSync(answers);
    symlinkSync(w.victim, answers);
    const before = snapshot(w.root);
    const r = runCli(['init', '--yes', '--force', '--date', DATE], { cwd: w.repo, env: { HOME: w.home } });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('rate-limit.answers.json: it is a symbolic link');
    expect(snapshot(w.root)).toEqual(before);
  });
});

describe('init writes the answers and the document together, or neither', () => {
  it('a document folder that is a link: exit 2, and no answers file either', () => {
    const w = world();
    unlinkSync(path.join(w.repo, 'rate-limit.answers.json'));
    symlinkSync(w.outside, path.join(w.repo, 'docs'));
    const before = snapshot(w.root);
    const r = runCli(['init', '--yes', '--date', DATE], { cwd: w.repo, env: { HOME: w.home } });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(
      'Nothing was written (neither the answers nor the document): Refusing to write through docs: it is a symbolic link',
    );
    expect(snapshot(w.root)).toEqual(before);
  });
});

describe('paths from the answers file stay inside the project', () => {
  it('output.path or output.codeDir outside (../.., /etc, ~): exit 2 naming the field, nothing written; the same path on the command line is allowed', () => {
    for (const [field, value] of [
      ['path', '../../..'],
      ['path', '/etc/rl-design-test'],
      ['codeDir', '../outside/code'],
      ['path', '~/docs'],
    ] as const) {
      const w = world('minimal-generic', (a) => {
        a.output = { ...(a.output as object), [field]: value };
      });
      const before = snapshot(w.root);
      const r = run(w, []);
      expect(r.code, `${field}=${value}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(`output.${field} in rate-limit.answers.json is "${value}", which is outside the current folder`);
      expect(r.stderr).toContain(field === 'path' ? '(--out)' : '(--code-dir)');
      expect(snapshot(w.root)).toEqual(before);
      expect(existsSync('/etc/rl-design-test.md')).toBe(false);
    }
    // Named on the command line, outside the project is the user's choice; `~` is the home folder, printed as ~/...
    const w = world();
    const r = run(w, ['--out', '~/design.md']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('wrote ~/design.md');
    expect(existsSync(path.join(w.home, 'design.md'))).toBe(true);
    expect(existsSync(path.join(w.repo, '~'))).toBe(false);
    // A home reached through a link (as on many systems) is still the user's to name.
    symlinkSync(w.home, path.join(w.root, 'home-link'));
    const linked = runCli(['generate', '--date', DATE, '--out', '~/linked.md'], {
      cwd: w.repo,
      env: { HOME: path.join(w.root, 'home-link') },
    });
    expect(linked.code, linked.stderr).toBe(0);
    expect(existsSync(path.join(w.home, 'linked.md'))).toBe(true);
  });

  it('refuses /proc, /sys and /dev at once, overlapping document and code folders, and an empty --out', () => {
    const w = world();
    const before = snapshot(w.root);
    for (const out of ['/proc/self/x/', '/sys/rl-design', '/dev/shm/rl-design/']) {
      const t0 = Date.now();
      const r = run(w, ['--out', out]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain('is under /proc, /sys or /dev');
      expect(Date.now() - t0).toBeLessThan(20_000);
    }
    let r = run(w, ['--out', 'x/', '--code-dir', 'x']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('The document (x/rate-limit-design.md) and the code folder (x) overlap');
    r = run(w, ['--out', '']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Option --out: is empty');
    expect(snapshot(w.root)).toEqual(before);
    // The document beside the code folder, or the code in a folder of its own inside the document's, is fine.
    r = run(w, ['--out', 'docs/', '--code-dir', 'docs/code']);
    expect(r.code, r.stderr).toBe(0);
  });
});

describe('all or nothing, one writer at a time', () => {
  /** Makes a folder unwritable: root ignores permission bits, so as root it is made immutable instead. */
  function unwritable(dir: string): () => void {
    const asRoot = process.getuid?.() === 0;
    if (asRoot) expect(spawnSync('chattr', ['+i', dir]).status).toBe(0);
    else chmodSync(dir, 0o555);
    return () => {
      if (asRoot) spawnSync('chattr', ['-i', dir]);
      else chmodSync(dir, 0o755);
    };
  }

  it('an unwritable document folder fails before anything is written: the code folder is not created', () => {
    // The folder itself (met when it is locked), and a subfolder met only when the files are staged.
    for (const [args, blocked] of [
      [['--out', 'docs/design.md', '--code-dir', 'ratelimit'], 'docs'],
      [['--format', 'html', '--layout', 'folder', '--out', 'site/', '--code-dir', 'ratelimit'], 'site/assets'],
    ] as const) {
      const w = world('saas-platform');
      mkdirSync(path.join(w.repo, blocked), { recursive: true });
      const restore = unwritable(path.join(w.repo, blocked));
      try {
        const before = snapshot(w.root);
        const r = run(w, [...args]);
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr).toContain(`Could not write ${blocked}/`);
        expect(snapshot(w.root)).toEqual(before);
        expect(existsSync(path.join(w.repo, 'ratelimit'))).toBe(false);
      } finally {
        restore();
      }
    }
  });

  it('a read-only folder whose files are up to date: exit 0, nothing to write, no lock needed', () => {
    const w = world();
    expect(run(w, ['--out', 'docs/design.md']).code).toBe(0);
    const restore = unwritable(path.join(w.repo, 'docs'));
    try {
      const before = snapshot(w.root);
      const r = run(w, ['--out', 'docs/design.md']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('unchanged docs/design.md');
      expect(snapshot(w.root)).toEqual(before);
    } finally {
      restore();
    }
  });

  it("two runs into one folder at once: each waits for the other, and the folder ends with one run's files and a manifest that matches them", async () => {
    const w = world('saas-platform');
    const start = (date: string): Promise<{ code: number; stderr: string }> =>
      new Promise((resolve) => {
        const child = spawn(
          process.execPath,
          [
            CLI,
            'generate',
            '--format',
            'markdown',
            '--layout',
            'folder',
            '--out',
            'out/',
            '--code-dir',
            'out/code',
            '--date',
            date,
            '--force',
          ],
          {
            cwd: w.repo,
            env: { ...process.env, HOME: w.home },
          },
        );
        let stderr = '';
        child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
        child.on('close', (code) => resolve({ code: code ?? -1, stderr }));
      });
    for (let round = 0; round < 3; round++) {
      const [a, b] = await Promise.all([start('2026-01-01'), start('2026-02-02')]);
      expect(a.code, a.stderr).toBe(0);
      expect(b.code, b.stderr).toBe(0);
      for (const dir of ['out', 'out/code']) {
        const folder = path.join(w.repo, dir);
        const manifest = JSON.parse(readFileSync(path.join(folder, MANIFEST), 'utf8')) as { files: Record<string, string> };
        for (const [rel, hash] of Object.entries(manifest.files))
          expect(sha(readFileSync(path.join(folder, rel))), `${dir}/${rel}`).toBe(hash);
        expect(readdirSync(folder).filter((n) => n.includes('rl-design-tmp') || n === '.rl-design.lock')).toEqual([]);
      }
      // every page of the document from the same run
      const dates = new Set(
        readdirSync(path.join(w.repo, 'out'))
          .filter((n) => n.endsWith('.md'))
          .map((n) => (/2026-0[12]-0[12]/.exec(readFileSync(path.join(w.repo, 'out', n), 'utf8')) ?? [''])[0]),
      );
      dates.delete('');
      expect(dates.size).toBe(1);
      // a plain run afterwards finds nothing edited
      const again = run(w, ['--format', 'markdown', '--layout', 'folder', '--out', 'out/', '--code-dir', 'out/code']);
      expect(again.code, again.stderr).toBe(0);
    }
  });

  it('SIGKILL in the middle of writing: the next run finds no lock stuck and no temporary file, and ends with a manifest that matches', async () => {
    const w = world('saas-platform');
    const flags = ['--format', 'markdown', '--layout', 'folder', '--out', 'out/', '--code-dir', 'out/code', '--force'];
    expect(run(w, flags).code).toBe(0);
    const out = path.join(w.repo, 'out');
    const debris = (): string[] =>
      readdirSync(out, { recursive: true })
        .map(String)
        .filter((n) => n.includes('rl-design-tmp') || n.endsWith('.rl-design.lock'));
    let interrupted = 0;
    for (const [i, nth] of [1, 2, 4, 8, 12].entries()) {
      // Killed on the nth file event of the run in the folder: while it holds the lock and stages files.
      const child = spawn(process.execPath, [CLI, 'generate', ...flags, '--date', `2026-01-0${i + 1}`], {
        cwd: w.repo,
        env: { ...process.env, HOME: w.home },
        stdio: 'ignore',
      });
      let seen = 0;
      const watcher = watch(out, (_, name) => {
        if (name && (String(name).includes('rl-design-tmp') || String(name) === '.rl-design.lock') && ++seen === nth) child.kill('SIGKILL');
      });
      await new Promise((r) => child.on('close', r));
      watcher.close();
      if (debris().length > 0) interrupted++;
      const t0 = Date.now();
      const next = run(w, flags);
      expect(next.code, next.stderr).toBe(0);
      expect(Date.now() - t0).toBeLessThan(20_000);
      expect(debris()).toEqual([]);
      for (const dir of ['out', 'out/code']) {
        const folder = path.join(w.repo, dir);
        const manifest = JSON.parse(readFileSync(path.join(folder, MANIFEST), 'utf8')) as { files: Record<string, string> };
        for (const [rel, hash] of Object.entries(manifest.files))
          expect(sha(readFileSync(path.join(folder, rel))), `${dir}/${rel}`).toBe(hash);
      }
    }
    // the kills did land mid-write (a lock or temporary files were left behind) at least once
    expect(interrupted).toBeGreaterThan(0);
  });

  it('a killed run leaves nothing stuck: its lock (a dead process) is taken over and its temporary files are removed', () => {
    const w = world();
    const out = path.join(w.repo, 'docs');
    mkdirSync(out);
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const pid = Number(dead.stdout);
    writeFileSync(path.join(out, '.rl-design.lock'), JSON.stringify({ pid, host: hostname(), token: 'x' }));
    writeFileSync(path.join(out, `.design.md.${pid}.0badc0de.rl-design-tmp`), 'half a file');
    writeFileSync(path.join(out, 'design.md.475758709'), 'half a file, older naming');
    writeFileSync(path.join(out, 'notes.md.1234567'), 'not ours: design.md is what this run writes');
    const r = run(w, ['--out', 'docs/design.md']);
    expect(r.code, r.stderr).toBe(0);
    expect(readdirSync(out).sort()).toEqual([MANIFEST, 'design.md', 'notes.md.1234567']);
  });
});

describe('one manifest per output folder', () => {
  it('a folder document with subfolders gets one manifest at its root, and the per-folder manifests of older versions are read and removed', () => {
    const w = world('saas-platform');
    let r = run(w, ['--format', 'html', '--layout', 'folder', '--out', 'site/']);
    expect(r.code, r.stderr).toBe(0);
    const manifests = (dir: string): string[] =>
      readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((d) => d.name === MANIFEST)
        .map((d) => path.relative(dir, path.join(d.parentPath, d.name)));
    expect(manifests(path.join(w.repo, 'site'))).toEqual([MANIFEST]);
    const root = JSON.parse(readFileSync(path.join(w.repo, 'site', MANIFEST), 'utf8')) as { files: Record<string, string> };
    const nested = Object.keys(root.files).filter((k) => k.includes('/'));
    expect(nested.length).toBeGreaterThan(0);
    // An older version's layout: the entries of assets/ in assets/.rl-design-manifest.json.
    const sub = nested[0]!.split('/')[0]!;
    const moved = Object.fromEntries(nested.filter((k) => k.startsWith(`${sub}/`)).map((k) => [k.slice(sub.length + 1), root.files[k]!]));
    writeFileSync(path.join(w.repo, 'site', sub, MANIFEST), JSON.stringify({ tool: 'rl-design', files: moved }));
    for (const k of nested) delete root.files[k];
    writeFileSync(path.join(w.repo, 'site', MANIFEST), JSON.stringify(root));
    r = run(w, ['--format', 'html', '--layout', 'folder', '--out', 'site/', '--date', '2026-12-03']);
    expect(r.code, r.stderr).toBe(0);
    expect(manifests(path.join(w.repo, 'site'))).toEqual([MANIFEST]);
  });
});
