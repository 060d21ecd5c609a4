import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { exampleNames, EXAMPLES, ROOT } from '../helpers/examples.js';
import { runCli, tempDir } from '../helpers/cli.js';
import { runGenerate } from '../../src/commands/generate.js';
import { UserError } from '../../src/messages.js';

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
    // the environment variables that change what it does, each named
    for (const v of ['SOURCE_DATE_EPOCH', 'RL_DESIGN_CACHE_DIR', 'RL_DESIGN_CACHE=off', 'NODE_DISABLE_COMPILE_CACHE'])
      expect(r.stdout).toContain(v);
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
    const r = runCli(['generate', '--example', 'minimal-generic', '--format', 'md', '--out', out], {
      env: { SOURCE_DATE_EPOCH: '1767225600' },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(out, 'utf8')).toContain('2026-01-01');
  });

  it('writes the folder form with an index and numbered section files', () => {
    const dir = tempDir();
    const r = runCli([
      'generate',
      '--example',
      'saas-platform',
      '--format',
      'markdown',
      '--layout',
      'folder',
      '--out',
      path.join(dir, 'design'),
      '--date',
      DATE,
    ]);
    expect(r.code, r.stderr).toBe(0);
    const files = listFiles(path.join(dir, 'design')).filter((f) => !f.startsWith('.'));
    expect(files).toContain('README.md');
    const sections = files.filter((f) => /^\d\d-.*\.md$/.test(f));
    expect(sections.length).toBeGreaterThanOrEqual(4);
    expect(sections.length).toBeLessThanOrEqual(8);
  });

  it('writes a built-in example as HTML when only a folder is given, and a named file as one file', () => {
    const dir = tempDir();
    // the example's answers say Markdown; --help's example promises HTML, the default format
    const folder = runCli(['generate', '--example', 'saas-platform', '--out', `${path.join(dir, 'docs')}/`, '--date', DATE]);
    expect(folder.code, folder.stderr).toBe(0);
    expect(folder.stdout).toContain('folder HTML document');
    const pages = listFiles(path.join(dir, 'docs')).filter((f) => f.endsWith('.html'));
    expect(pages).toContain('index.html');
    expect(pages.filter((f) => f.endsWith('.md'))).toEqual([]);
    // pages are numbered by the first section they hold
    expect(pages).toContain('03-algorithms-and-enforcement.html');
    expect(readFileSync(path.join(dir, 'docs', '03-algorithms-and-enforcement.html'), 'utf8')).toContain(
      '<h2 id="4-enforcement">4. Enforcement</h2>',
    );
    // --out x.html is that one file, even for a design auto would split
    const file = runCli(['generate', '--example', 'saas-platform', '--out', path.join(dir, 'one.html'), '--date', DATE]);
    expect(file.code, file.stderr).toBe(0);
    expect(file.stdout).toContain('single HTML document');
    expect(existsSync(path.join(dir, 'one.html'))).toBe(true);
    // --format still decides
    const md = runCli([
      'generate',
      '--example',
      'minimal-generic',
      '--format',
      'markdown',
      '--out',
      `${path.join(dir, 'md')}/`,
      '--date',
      DATE,
    ]);
    expect(md.code, md.stderr).toBe(0);
    expect(listFiles(path.join(dir, 'md')).filter((f) => !f.startsWith('.'))).toEqual(['rate-limit-design.md']);
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

  it('reports files an earlier run wrote and this design no longer generates, and --prune removes the unedited ones', () => {
    const dir = tempDir();
    const answers = path.join(dir, 'api.answers.json');
    const source = JSON.parse(readFileSync(path.join(ROOT, 'examples', 'saas-platform.answers.json'), 'utf8'));
    delete source.$schema;
    delete source.openapi; // its OpenAPI document stays beside the example
    writeFileSync(answers, JSON.stringify(source));
    const args = [
      'generate',
      '-a',
      answers,
      '--format',
      'markdown',
      '--out',
      `${path.join(dir, 'doc')}/`,
      '--code-dir',
      path.join(dir, 'code'),
      '--date',
      DATE,
    ];
    expect(runCli(args).code).toBe(0);
    const code = path.join(dir, 'code');
    expect(existsSync(path.join(code, 'gateway', 'nginx.conf'))).toBe(true);
    expect(existsSync(path.join(code, 'middleware', 'express.ts'))).toBe(true);
    // Another design for the same answers file: Fastify instead of Express, no gateway.
    writeFileSync(answers, JSON.stringify({ ...source, stack: { ...source.stack, framework: 'fastify', gateway: 'none' } }));
    // The user edited one of the files that will be left over.
    writeFileSync(path.join(code, 'gateway', 'nginx-server.conf'), '# my own tweak\n');
    const second = runCli(args);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toMatch(/file\(s\) an earlier run wrote are no longer generated \(--prune removes the unedited ones\)/);
    expect(second.stdout).toContain(`code/middleware/express.ts`);
    expect(second.stdout).toMatch(/gateway\/nginx-server\.conf \(edited since; kept\)/);
    expect(existsSync(path.join(code, 'middleware', 'express.ts'))).toBe(true);
    expect(existsSync(path.join(code, 'middleware', 'fastify.ts'))).toBe(true);
    // --prune removes what is unedited and no longer generated, keeps the edited file, and empties nothing else.
    const pruned = runCli([...args, '--prune']);
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(pruned.stdout).toMatch(/removed .*code\/middleware\/express\.ts \(no longer generated\)/);
    expect(pruned.stdout).toMatch(/removed .*code\/gateway\/nginx\.conf/);
    expect(existsSync(path.join(code, 'middleware', 'express.ts'))).toBe(false);
    expect(existsSync(path.join(code, 'gateway', 'nginx.conf'))).toBe(false);
    expect(readFileSync(path.join(code, 'gateway', 'nginx-server.conf'), 'utf8')).toBe('# my own tweak\n');
    expect(existsSync(path.join(code, 'middleware', 'fastify.ts'))).toBe(true);
    // A third run has nothing left to report but the edited file it keeps.
    const third = runCli([...args, '--prune']);
    expect(third.stdout).not.toContain('removed');
    expect(third.stdout).toMatch(/1 file\(s\) an earlier run wrote/);
    // Another answers file writing into the same code folder is not this design's leftover.
    const other = path.join(dir, 'other.answers.json');
    writeFileSync(other, JSON.stringify(source));
    const otherRun = runCli([
      'generate',
      '-a',
      other,
      '--format',
      'markdown',
      '--out',
      `${path.join(dir, 'doc2')}/`,
      '--code-dir',
      path.join(dir, 'code2'),
      '--date',
      DATE,
    ]);
    expect(otherRun.code, otherRun.stderr).toBe(0);
    expect(otherRun.stdout).not.toContain('no longer generated');
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
    writeFileSync(
      answers,
      JSON.stringify({ goals: ['fairness'], stack: { gateway: 'haproxy' }, endpoints: [{ name: 'x', route: 'x', class: 'read' }] }),
    );
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

  it('keeps the checked-in example documents current, Markdown and HTML (run `npm run examples` when this fails)', () => {
    for (const name of exampleNames()) {
      const checkedInDir = path.join(EXAMPLES, 'generated', name);
      for (const format of ['markdown', 'html'] as const) {
        const dir = tempDir();
        const code = format === 'markdown' ? ['--code-dir', path.join(dir, 'code')] : [];
        const r = runCli(['generate', '--example', name, '--format', format, '--out', `${dir}/`, ...code, '--date', DATE]);
        expect(r.code, r.stderr).toBe(0);
        const fresh = listFiles(dir).filter((f) => !f.split(path.sep).some((part) => part.startsWith('.')));
        const base = format === 'html' ? path.join(checkedInDir, 'html') : checkedInDir;
        const checkedIn = listFiles(base).filter(
          (f) => !f.split(path.sep).some((part) => part.startsWith('.')) && (format === 'html' || !f.startsWith(`html${path.sep}`)),
        );
        expect(checkedIn, `${name} ${format}`).toEqual(fresh);
        for (const f of fresh) {
          expect(readFileSync(path.join(base, f), 'utf8'), `${name}/${format}/${f}`).toBe(readFileSync(path.join(dir, f), 'utf8'));
        }
      }
    }
  });

  it('writes HTML by default: one self-contained file, or a folder with index.html, pages and one stylesheet', () => {
    const dir = tempDir();
    const answers = path.join(dir, 'answers.json');
    writeFileSync(answers, JSON.stringify({ project: { name: 'Default format' } }));
    const single = runCli(['generate', '-a', answers, '--out', path.join(dir, 'doc'), '--date', DATE]);
    expect(single.code, single.stderr).toBe(0);
    expect(single.stdout).toContain('single HTML document');
    const html = readFileSync(path.join(dir, 'doc.html'), 'utf8');
    expect(html.startsWith('<!DOCTYPE html>')).toBe(true);
    expect(html).toContain('<time datetime="2026-12-02">2026-12-02</time>');
    expect(html).not.toMatch(/<script|<link\b|\ssrc=/i);

    const folder = runCli([
      'generate',
      '--example',
      'consumer-auth',
      '--format',
      'html',
      '--layout',
      'folder',
      '--out',
      path.join(dir, 'site'),
      '--date',
      DATE,
    ]);
    expect(folder.code, folder.stderr).toBe(0);
    const files = listFiles(path.join(dir, 'site')).filter((f) => !f.split(path.sep).some((part) => part.startsWith('.')));
    expect(files).toContain('index.html');
    expect(files).toContain(path.join('assets', 'styles.css'));
    const pages = files.filter((f) => /^\d\d-.*\.html$/.test(f));
    expect(pages.length).toBeGreaterThanOrEqual(4);
    expect(pages.length).toBeLessThanOrEqual(8);
  });

  it('takes the extension of the chosen format when --out names the other one', () => {
    const dir = tempDir();
    const r = runCli(['generate', '--example', 'consumer-auth', '--format', 'html', '--out', path.join(dir, 'design.md'), '--date', DATE]);
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(path.join(dir, 'design.html'))).toBe(true);
    expect(existsSync(path.join(dir, 'design.md'))).toBe(false);
  });

  it('without --format, the extension of --out chooses the format over the answers', () => {
    const dir = tempDir();
    // consumer-auth's answers ask for Markdown
    const html = runCli(['generate', '--example', 'consumer-auth', '--out', path.join(dir, 'design.html'), '--date', DATE]);
    expect(html.code, html.stderr).toBe(0);
    expect(readFileSync(path.join(dir, 'design.html'), 'utf8')).toMatch(/^<!doctype html>/i);
    expect(existsSync(path.join(dir, 'design.md'))).toBe(false);
    expect(html.stdout).toContain('single HTML document');

    // answers asking for HTML, --out naming a Markdown file
    const answers = JSON.parse(readFileSync(path.join(ROOT, 'examples', 'consumer-auth.answers.json'), 'utf8'));
    answers.output = { format: 'html', layout: 'single' };
    delete answers.openapi; // its OpenAPI document stays beside the example
    const file = path.join(dir, 'html.answers.json');
    writeFileSync(file, JSON.stringify(answers));
    const md = runCli(['generate', '-a', file, '--out', path.join(dir, 'notes.md'), '--date', DATE]);
    expect(md.code, md.stderr).toBe(0);
    expect(readFileSync(path.join(dir, 'notes.md'), 'utf8')).toMatch(/^# /);
    expect(existsSync(path.join(dir, 'notes.html'))).toBe(false);
    // no extension: the answers decide
    const plain = runCli(['generate', '-a', file, '--out', path.join(dir, 'plain'), '--date', DATE]);
    expect(plain.code, plain.stderr).toBe(0);
    expect(existsSync(path.join(dir, 'plain.html'))).toBe(true);
  });

  it('--diagrams mermaid-cli says clearly how to install the optional package, and writes nothing', async () => {
    const dir = tempDir();
    const out: string[] = [];
    const ctx = { cwd: dir, stdout: (t: string) => out.push(t), stderr: (t: string) => out.push(t), today: () => DATE };
    const run = runGenerate(ctx, {
      example: 'saas-platform',
      format: 'html',
      diagrams: 'mermaid-cli',
      out: path.join(dir, 'site'),
      date: DATE,
    });
    await expect(run).rejects.toThrow(UserError);
    await expect(
      runGenerate(ctx, { example: 'saas-platform', format: 'html', diagrams: 'mermaid-cli', out: path.join(dir, 'site'), date: DATE }),
    ).rejects.toThrow(
      /--diagrams: mermaid-cli needs the optional package @mermaid-js\/mermaid-cli.*npm install --save-dev @mermaid-js\/mermaid-cli/s,
    );
    expect(existsSync(path.join(dir, 'site'))).toBe(false);
    await expect(
      runGenerate(ctx, { example: 'saas-platform', format: 'html', diagrams: 'graphviz', out: path.join(dir, 'x') }),
    ).rejects.toThrow(/"graphviz" is not a diagram renderer; use beautiful-mermaid or mermaid-cli/);
  });
});

describe('rl-design generate --code-dir (built binary)', () => {
  it('writes the enforcement code, prints the Lua and gateway bytes in the document and links the runtimes', () => {
    const dir = tempDir();
    const r = runCli([
      'generate',
      '--example',
      'saas-platform',
      '--format',
      'markdown',
      '--layout',
      'single',
      '--out',
      path.join(dir, 'd.md'),
      '--code-dir',
      path.join(dir, 'code'),
      '--date',
      DATE,
    ]);
    expect(r.code, r.stderr).toBe(0);
    const code = listFiles(path.join(dir, 'code')).filter((f) => !f.startsWith('.'));
    expect(code).toEqual(
      expect.arrayContaining([
        'README.md',
        'lua/gcra.lua',
        'lua/sliding-window-log.lua',
        'middleware/express.ts',
        'gateway/nginx.conf',
        'monitoring/ratelimit-alerts.yaml',
        'outbound/client.ts',
      ]),
    );
    const doc = readFileSync(path.join(dir, 'd.md'), 'utf8');
    for (const f of ['lua/gcra.lua', 'gateway/nginx.conf']) {
      const body = readFileSync(path.join(dir, 'code', f), 'utf8');
      expect(doc).toContain(body.trimEnd());
    }
    // the runtimes are linked from the document's folder, not printed
    const core = readFileSync(path.join(dir, 'code', 'middleware/limiter.ts'), 'utf8');
    expect(doc).not.toContain(
      core.slice(core.indexOf('export function createLimiter'), core.indexOf('export function createLimiter') + 200),
    );
    for (const f of ['middleware/limiter.ts', 'middleware/design.ts', 'middleware/express.ts', 'outbound/client.ts'])
      expect(doc).toContain(`](code/${f})`);
    // the design's rules are printed, from the data module
    expect(doc).toContain("The design's rules, from `middleware/design.ts`");
    // a built-in example never writes into the current folder's ratelimit/
    expect(existsSync(path.join(process.cwd(), 'ratelimit'))).toBe(false);
  });
});
