/**
 * Relative paths in an answers file (output.path, output.codeDir, like openapi.path) are read
 * from the answers file's folder, whatever folder the command runs in and whatever --out says;
 * paths on the command line are read from the current folder. In real temp folders, in-process.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CommandContext } from '../../src/commands/context.js';
import { runGenerate } from '../../src/commands/generate.js';
import { runInit, type InitIo } from '../../src/commands/init.js';
import { nodeProjectFs } from '../../src/io/project-fs.js';
import { refusingPrompter } from '../../src/questionnaire/prompt.js';
import { snapshot } from '../helpers/tree.js';
import { tempDir } from '../helpers/cli.js';
import { DATE } from '../helpers/examples.js';

const ANSWERS = {
  project: { name: 'paths-api' },
  output: { format: 'markdown', layout: 'single', path: 'docs/design.md', codeDir: 'ratelimit' },
  stack: { topology: 'single', framework: 'express', store: 'redis' },
};

function context(cwd: string): CommandContext & { out: () => string } {
  let out = '';
  return { cwd, stdout: (t) => (out += t), stderr: () => {}, today: () => DATE, out: () => out };
}

/** root/project holds the answers; root/elsewhere is where the command runs. */
function world(): { root: string; project: string; elsewhere: string; answers: string } {
  const root = tempDir('rl-design-answers-paths-');
  const project = path.join(root, 'project');
  const elsewhere = path.join(root, 'elsewhere');
  mkdirSync(project);
  mkdirSync(elsewhere);
  const answers = path.join(project, 'rate-limit.answers.json');
  writeFileSync(answers, `${JSON.stringify(ANSWERS, null, 2)}\n`);
  return { root, project, elsewhere, answers };
}

describe('relative paths in the answers are read from the answers file folder', () => {
  it('generate run from another folder writes the document and the code beside the answers, nothing in the current folder', async () => {
    const w = world();
    const ctx = context(w.elsewhere);
    expect(await runGenerate(ctx, { answers: w.answers, date: DATE })).toBe(0);
    expect(existsSync(path.join(w.project, 'docs', 'design.md'))).toBe(true);
    expect(existsSync(path.join(w.project, 'ratelimit', 'middleware', 'design.ts'))).toBe(true);
    expect(snapshot(w.elsewhere)).toEqual({});
    // the document links the code folder where it is
    expect(readFileSync(path.join(w.project, 'docs', 'design.md'), 'utf8')).toContain('](../ratelimit/');
  });

  it('--out elsewhere moves the document only: the code stays where the answers say, and the link follows', async () => {
    const w = world();
    const ctx = context(w.project);
    expect(await runGenerate(ctx, { answers: 'rate-limit.answers.json', out: '../elsewhere/preview/', date: DATE })).toBe(0);
    expect(existsSync(path.join(w.elsewhere, 'preview', 'rate-limit-design.md'))).toBe(true);
    expect(existsSync(path.join(w.project, 'ratelimit', 'middleware', 'design.ts'))).toBe(true);
    expect(existsSync(path.join(w.elsewhere, 'ratelimit'))).toBe(false);
    expect(existsSync(path.join(w.elsewhere, 'preview', 'ratelimit'))).toBe(false);
    expect(readFileSync(path.join(w.elsewhere, 'preview', 'rate-limit-design.md'), 'utf8')).toContain('](../../project/ratelimit/');
    // --code-dir on the command line is read from the current folder
    const other = context(w.elsewhere);
    expect(await runGenerate(other, { answers: w.answers, codeDir: 'code', date: DATE })).toBe(0);
    expect(existsSync(path.join(w.elsewhere, 'code', 'middleware', 'design.ts'))).toBe(true);
  });

  it('a code file the user edited is not overwritten from the new place either: exit 2, nothing written', async () => {
    const w = world();
    expect(await runGenerate(context(w.elsewhere), { answers: w.answers, date: DATE })).toBe(0);
    const edited = path.join(w.project, 'ratelimit', 'middleware', 'design.ts');
    writeFileSync(edited, `${readFileSync(edited, 'utf8')}// mine\n`);
    const before = snapshot(w.root);
    await expect(runGenerate(context(w.elsewhere), { answers: w.answers, date: '2026-12-03' })).rejects.toThrow(
      /Refusing to overwrite .*design\.ts/,
    );
    expect(snapshot(w.root)).toEqual(before);
  });

  it('a path in the answers that leaves both folders is refused, naming the field', async () => {
    const w = world();
    writeFileSync(w.answers, JSON.stringify({ ...ANSWERS, output: { ...ANSWERS.output, codeDir: '../outside' } }));
    const before = snapshot(w.root);
    await expect(runGenerate(context(w.elsewhere), { answers: w.answers, date: DATE })).rejects.toThrow(
      /output\.codeDir in .* is "\.\.\/outside", which is outside/,
    );
    expect(snapshot(w.root)).toEqual(before);
  });
});

describe('init writes paths relative to the answers file it writes', () => {
  const io: InitIo = {
    stdinIsTTY: false,
    prompter: refusingPrompter,
    onInterrupt: () => () => {},
    exit: (code) => {
      throw new Error(`exit ${code}`);
    },
    projectFs: nodeProjectFs,
  };
  const flags = { yes: true, format: 'markdown', out: 'docs/limits.md', codeDir: 'src/limits', goals: 'overload', framework: 'express' };

  it('--answers-file in a subfolder: the answers say ../docs and ../src/limits, and generate from there writes the same files', async () => {
    const dir = tempDir('rl-design-init-paths-');
    mkdirSync(path.join(dir, 'config'));
    const ctx = context(dir);
    expect(await runInit(ctx, { ...flags, answersFile: 'config/rl.answers.json', date: DATE }, io)).toBe(0);
    const answers = JSON.parse(readFileSync(path.join(dir, 'config', 'rl.answers.json'), 'utf8'));
    expect(answers.output).toMatchObject({ path: '../docs/limits.md', codeDir: '../src/limits' });
    expect(existsSync(path.join(dir, 'docs', 'limits.md'))).toBe(true);
    expect(existsSync(path.join(dir, 'src', 'limits', 'middleware', 'design.ts'))).toBe(true);
    // generate from the answers alone writes exactly those files again
    const before = snapshot(dir);
    const gen = context(dir);
    expect(await runGenerate(gen, { answers: 'config/rl.answers.json', date: DATE })).toBe(0);
    expect(gen.out()).not.toContain('  wrote');
    expect(snapshot(dir)).toEqual(before);
    // a second init with the same flags changes no answer: the file keeps its spelling
    expect(await runInit(context(dir), { ...flags, answersFile: 'config/rl.answers.json', date: DATE }, io)).toBe(0);
    expect(snapshot(dir)).toEqual(before);
  });

  it('answers file in the current folder: the paths are written as typed', async () => {
    const dir = tempDir('rl-design-init-paths-');
    expect(await runInit(context(dir), { ...flags, date: DATE }, io)).toBe(0);
    const answers = JSON.parse(readFileSync(path.join(dir, 'rate-limit.answers.json'), 'utf8'));
    expect(answers.output).toMatchObject({ path: 'docs/limits.md', codeDir: 'src/limits' });
  });
});
