/** `runInit` in-process: the terminal, the prompts and SIGINT are injected; the disk is a temp copy of a fixture. */
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CommandContext } from '../../src/commands/context.js';
import { runInit, type InitIo } from '../../src/commands/init.js';
import { nodeProjectFs } from '../../src/io/project-fs.js';
import type { UserError } from '../../src/messages.js';
import type { InitRawOptions } from '../../src/questionnaire/flags.js';
import { PromptCancelled, type Prompter } from '../../src/questionnaire/prompt.js';
import { FIXTURES } from './detect/fixtures.js';
import { DEFAULT, scripted, type Entry } from './support/scripted.js';
import { generatedFiles } from '../helpers/cli.js';

class Exited extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

function project(name: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), `rl-init-${name}-`));
  cpSync(path.join(FIXTURES, name), dir, { recursive: true });
  return dir;
}

interface Run {
  code: number | undefined;
  stdout: string;
  stderr: string;
  error?: unknown;
}

async function init(
  cwd: string,
  raw: InitRawOptions,
  options: { tty?: boolean; prompter?: Prompter | ((interrupt: () => void) => Prompter); script?: Entry[] } = {},
): Promise<Run> {
  let out = '';
  let err = '';
  const handlers: (() => void)[] = [];
  const interrupt = (): void => handlers.at(-1)?.();
  const ctx: CommandContext = { cwd, stdout: (t) => (out += t), stderr: (t) => (err += t), today: () => '2026-01-01' };
  const io: InitIo = {
    stdinIsTTY: options.tty ?? true,
    prompter: () =>
      typeof options.prompter === 'function' ? options.prompter(interrupt) : (options.prompter ?? scripted(options.script ?? [])),
    onInterrupt: (h) => {
      handlers.push(h);
      return () => handlers.splice(handlers.indexOf(h), 1);
    },
    exit: (code) => {
      throw new Exited(code);
    },
    projectFs: nodeProjectFs,
  };
  try {
    const code = await runInit(ctx, raw, io);
    return { code, stdout: out, stderr: err };
  } catch (e) {
    if (e instanceof Exited) return { code: e.code, stdout: out, stderr: err };
    return { code: undefined, stdout: out, stderr: err, error: e };
  }
}

const QUICK: InitRawOptions = {
  format: 'markdown',
  codeDir: 'none',
  goals: 'overload',
  framework: 'express',
  language: 'TypeScript',
  store: 'redis',
  topology: 'single',
  gateway: 'none',
  identities: 'api-key',
  endpoint: ['none'],
  typicalRps: 'unknown',
  peakRps: '200',
  capacityRps: 'unknown',
  burstiness: 'moderate',
  clients: 'unknown',
  plan: ['none'],
  failMode: 'rule-of-thumb',
  outbound: ['none'],
};

describe('runInit', () => {
  it('interactive: confirms detected facts, asks the rest, writes the answers and the document, prints the summary', async () => {
    const dir = project('express-ioredis');
    const r = await init(
      dir,
      { ...QUICK, framework: undefined, language: undefined, store: undefined, topology: undefined },
      {
        script: [
          { input: 'Write the document to', answer: DEFAULT },
          {
            confirm: 'Keep what was found for the stack: framework express, language JavaScript, store redis (package.json)?',
            answer: true,
          },
          { select: 'How does the API run', answer: 'horizontal' },
          { input: 'How many instances', answer: '3' },
        ],
      },
    );
    expect(r.error).toBeUndefined();
    expect(r.code).toBe(0);
    expect(r.stdout.indexOf('framework: express (package.json')).toBeLessThan(r.stdout.indexOf('Key decisions'));
    const answers = JSON.parse(readFileSync(path.join(dir, 'rate-limit.answers.json'), 'utf8'));
    expect(answers.$schema).toBe('./node_modules/rl-design/schemas/answers.schema.json');
    expect(answers.project).toEqual({ name: 'shop-api' });
    expect(answers.stack).toEqual({
      framework: 'express',
      language: 'JavaScript',
      topology: 'horizontal',
      instances: 3,
      gateway: 'none',
      store: 'redis',
    });
    expect(readFileSync(path.join(dir, 'docs/rate-limit-design.md'), 'utf8')).toContain('shop-api');
    expect(r.stdout).toMatch(/RULE\s+LAYER\s+RATE\s+FAIL MODE/);
    expect(r.stdout).toContain('Headers: ');
    expect(r.stdout).toMatch(/rate-limit\.answers\.json\s+the answers/);
    expect(r.stdout).toMatch(/docs\/rate-limit-design\.md\s+the design document \(Markdown\)/);
  });

  it('HTML by default, and the code is written to the chosen code folder', async () => {
    const dir = project('empty');
    const r = await init(dir, { ...QUICK, format: 'html', codeDir: 'src/limits', yes: true });
    expect(r.code).toBe(0);
    const answers = JSON.parse(readFileSync(path.join(dir, 'rate-limit.answers.json'), 'utf8'));
    expect(answers.output).toEqual({ format: 'html', path: 'docs/rate-limit-design.html', codeDir: 'src/limits' });
    // the embedded code makes the document long, so the auto layout may choose the folder form
    const single = existsSync(path.join(dir, 'docs/rate-limit-design.html'));
    expect(single || existsSync(path.join(dir, 'docs/rate-limit-design/index.html'))).toBe(true);
    expect(r.stdout).toMatch(/docs\/rate-limit-design(\.html|\/index\.html)\s+the design document/);
    expect(r.stdout).toMatch(/src\/limits\s+enforcement code: \d+ files/);
    expect(existsSync(path.join(dir, 'src/limits/lua/gcra.lua'))).toBe(true);
    expect(existsSync(path.join(dir, 'src/limits/middleware/express.ts'))).toBe(true);
  });

  it('Ctrl-C at a prompt: exit 130, one line, nothing written', async () => {
    const dir = project('fastify-openapi');
    const prompter = scripted([{ select: 'Format', answer: 'markdown' }]);
    const cancelling: Prompter = { ...prompter, input: async () => Promise.reject(new PromptCancelled()) };
    const r = await init(dir, {}, { prompter: cancelling });
    expect(r.code).toBe(130);
    expect(r.stderr).toBe('rl-design: Cancelled: nothing was written.\n');
    expect(existsSync(path.join(dir, 'rate-limit.answers.json'))).toBe(false);
    expect(existsSync(path.join(dir, 'docs'))).toBe(false);
  });

  it('Ctrl-C between prompts (SIGINT): exit 130, one line, nothing written', async () => {
    const dir = project('empty');
    // The first question triggers the SIGINT handler runInit registered, as a real Ctrl-C would.
    const r = await init(dir, {}, { prompter: (interrupt) => ({ ...scripted([]), select: async () => (interrupt(), 'html') as never }) });
    expect(r.code).toBe(130);
    expect(r.stderr).toBe('rl-design: Cancelled: nothing was written.\n');
    expect(existsSync(path.join(dir, 'rate-limit.answers.json'))).toBe(false);
    expect(existsSync(path.join(dir, 'docs'))).toBe(false);
  });

  it('an answers file that does not load: exit 2 before any question, naming the file and the problem; nothing written; --force starts from scratch', async () => {
    const dir = project('empty');
    const file = path.join(dir, 'rate-limit.answers.json');
    for (const [text, problem] of [
      ['{"goals":["quotas"],}\n', 'Answers file rate-limit.answers.json is not valid JSON: '],
      [
        '{"goals":["speed"]}\n',
        'Answers file rate-limit.answers.json has 1 problem(s):\n  $.goals[0]: must be one of "overload", "abuse", "fairness", "quotas"',
      ],
    ] as const) {
      writeFileSync(file, text);
      for (const raw of [{ ...QUICK, yes: true }, { ...QUICK }]) {
        const prompter = scripted([]);
        const r = await init(dir, raw, { prompter });
        expect(r.error).toBeUndefined();
        expect(r.code).toBe(2);
        expect(r.stderr.startsWith(`rl-design: ${problem}`)).toBe(true);
        expect(r.stderr).toContain(
          'rl-design: init reuses an existing answers file as its defaults, and will not replace one it cannot load: nothing was written.',
        );
        expect(r.stdout).toBe('');
        expect(prompter.asked).toEqual([]);
        expect(readFileSync(file, 'utf8')).toBe(text);
        expect(existsSync(path.join(dir, 'docs'))).toBe(false);
      }
    }
    const forced = await init(dir, { ...QUICK, yes: true, force: true });
    expect(forced.code).toBe(0);
    expect(forced.stdout).toContain('--force: starting from scratch; rate-limit.answers.json will be replaced.');
    expect(JSON.parse(readFileSync(file, 'utf8')).goals).toEqual(['overload']);
  });

  it('a valid answers file: its answers are the defaults, rewritten only when one changed, with no question and no --force needed', async () => {
    const dir = project('empty');
    const file = path.join(dir, 'rate-limit.answers.json');
    writeFileSync(file, '{"goals":["quotas"],"traffic":{"peakRps":100,"headroom":3}}\n');

    // Interactive: the previous goals come pre-picked; nothing asks to replace the file.
    const prompter = scripted([
      { input: 'Write the document to', answer: DEFAULT },
      { checkbox: 'What should rate limiting protect against?', answer: DEFAULT },
      { confirm: 'Keep the traffic: peak rps 100 (previous answers in rate-limit.answers.json)?', answer: DEFAULT },
    ]);
    const first = await init(dir, { ...QUICK, goals: undefined, peakRps: undefined }, { prompter });
    expect(first.error).toBeUndefined();
    expect(first.code).toBe(0);
    expect(prompter.remaining()).toEqual([]);
    expect(first.stdout).toContain('Read the previous answers in rate-limit.answers.json');
    expect(first.stdout).toMatch(
      /rate-limit\.answers\.json: changed output, stack, identities, endpoints, traffic\.burstiness, plans, failure, outbound; every other answer kept\./,
    );
    const written = JSON.parse(readFileSync(file, 'utf8'));
    expect(written.goals).toEqual(['quotas']);
    expect(written.traffic).toEqual({ peakRps: 100, headroom: 3, burstiness: 'moderate' });

    // Nothing changed: the file is left alone.
    const text = readFileSync(file, 'utf8');
    const again = await init(dir, { ...QUICK, goals: undefined, peakRps: undefined, yes: true });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('rate-limit.answers.json: no answer changed; the file is left as it was.');
    expect(readFileSync(file, 'utf8')).toBe(text);
  });

  it('an answers file that changes on disk during the interview is only replaced after a yes (default no), or with --force', async () => {
    const dir = project('empty');
    const file = path.join(dir, 'rate-limit.answers.json');
    // Someone writes the file while the interview is on the path question.
    const editing = (answer: boolean | typeof DEFAULT): Prompter => {
      const s = scripted([
        { input: 'Write the document to', answer: DEFAULT },
        { confirm: 'rate-limit.answers.json exists and differs from these answers. Replace it?', answer },
      ]);
      return {
        ...s,
        input: async (q) => {
          writeFileSync(file, '{"goals":["quotas"]}\n');
          return s.input(q);
        },
      };
    };
    const kept = await init(dir, QUICK, { prompter: editing(DEFAULT) });
    expect(kept.code).toBe(0);
    expect(kept.stdout).toContain('Kept rate-limit.answers.json as it was; nothing was written.');
    expect(readFileSync(file, 'utf8')).toBe('{"goals":["quotas"]}\n');
    expect(existsSync(path.join(dir, 'docs'))).toBe(false);

    rmSync(file);
    const replaced = await init(dir, QUICK, { prompter: editing(true) });
    expect(replaced.code).toBe(0);
    expect(JSON.parse(readFileSync(file, 'utf8')).goals).toEqual(['overload']);
  });

  it('behind nginx: asks how many nodes share the ceiling, shows it in the summary, and generate ships ceiling / K per node', async () => {
    const dir = project('empty');
    const raw = { ...QUICK, gateway: 'nginx', topology: 'horizontal', instances: '4', trustedProxies: '10.0.0.0/8' };
    const r = await init(dir, raw, {
      script: [
        { input: 'Write the document to', answer: DEFAULT },
        { input: 'How many nginx nodes serve the API?', answer: '2' },
      ],
    });
    expect(r.error).toBeUndefined();
    expect(r.code).toBe(0);
    const answersFile = path.join(dir, 'rate-limit.answers.json');
    const answers = JSON.parse(readFileSync(answersFile, 'utf8'));
    expect(answers.stack).toMatchObject({ gateway: 'nginx', instances: 4, gatewayNodes: 2 });
    const line = r.stdout.split('\n').find((l) => l.includes('Gateway nodes:'));
    expect(line).toMatch(
      /Gateway nodes: 2 nginx nodes \(stack\.gatewayNodes\): the ceiling admits [\d,]+ req\/s, [\d,]+ req\/s on each of the 2 nginx nodes/,
    );
    // the written answers round-trip through generate: each node's zone carries half the ceiling
    const { files, answers: read } = generatedFiles(answersFile, '2026-01-01');
    expect((read as { stack: unknown }).stack).toMatchObject({ gatewayNodes: 2 });
    const [, fleet, node] = /admits ([\d,]+) req\/s, ([\d,]+) req\/s on each/.exec(line ?? '') ?? [];
    expect(Number(node?.replace(/,/g, '')) * 2).toBe(Number(fleet?.replace(/,/g, '')));
    const zones = files.find((f) => f.path === 'gateway/nginx.conf')?.content ?? '';
    expect(zones).toMatch(new RegExp(`rate=${node?.replace(/,/g, '')}r/s`));

    // without the count the summary states the assumption; a bad count is refused naming the flag
    const quiet = await init(project('empty'), { ...raw, yes: true });
    expect(quiet.stdout).toContain('Gateway nodes: not given (stack.gatewayNodes), 4 assumed, one per instance');
    const bad = await init(project('empty'), { ...raw, yes: true, gatewayNodes: '0' });
    expect((bad.error as UserError).message).toBe('Option --gateway-nodes: 0 must be greater than 0, e.g. 3');
  });

  it('without a TTY it says so, asks nothing and uses detected facts', async () => {
    const dir = project('nginx-only');
    const r = await init(dir, { format: 'markdown' }, { tty: false, prompter: scripted([]) });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('No terminal on standard input: using flags, detected facts and defaults, as with --yes.');
    const answers = JSON.parse(readFileSync(path.join(dir, 'rate-limit.answers.json'), 'utf8'));
    expect(answers.stack).toEqual({ gateway: 'nginx', trustedProxies: ['10.0.0.0/8'] });
  });

  it('--answers-file writes elsewhere; a bad flag fails before anything is written', async () => {
    const dir = project('empty');
    const r = await init(dir, { ...QUICK, yes: true, answersFile: 'config/limits.json' });
    expect(r.code).toBe(0);
    expect(JSON.parse(readFileSync(path.join(dir, 'config/limits.json'), 'utf8')).goals).toEqual(['overload']);
    expect(existsSync(path.join(dir, 'rate-limit.answers.json'))).toBe(false);
    expect(r.stdout).toMatch(/config\/limits\.json\s+the answers/);
    const bad = await init(project('empty'), { yes: true, peakRps: 'fast' });
    expect((bad.error as UserError).message).toBe('Option --peak-rps: "fast" is not a number: type digits only, e.g. 600');
  });
});
