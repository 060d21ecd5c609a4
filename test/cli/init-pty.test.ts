/**
 * `rl-design init` through a real pseudo-terminal (tmux): the built binary, answered with
 * keystrokes (arrows, space, enter, typed text), in temp copies of the fixture projects.
 * Every key is sent only after the prompt it answers is on the screen.
 */
import { cpSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Answers } from '../../src/answers/schema.js';
import { CLI, tempDir } from '../helpers/cli.js';
import { ROOT } from '../helpers/examples.js';
import { PREVIOUS, PREVIOUS_TEXT } from '../questionnaire/support/previous.js';
import { TmuxSession, tmuxAvailable } from '../questionnaire/support/tmux.js';

const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'projects');
const TIMEOUT = 120_000;
const HAVE_TMUX = tmuxAvailable();

function project(name: string): string {
  const dir = tempDir(`rl-pty-${name}-`);
  cpSync(path.join(FIXTURES, name), dir, { recursive: true });
  return dir;
}

const sessions: TmuxSession[] = [];
afterEach(() => {
  for (const s of sessions.splice(0)) s.close();
});

/** `width`: inquirer breaks a prompt longer than the terminal into lines; a wide one keeps long prompts whole. */
function start(cwd: string, args: string[], width?: number): TmuxSession {
  const s = new TmuxSession({
    cwd,
    command: [process.execPath, CLI, 'init', ...args],
    env: { SOURCE_DATE_EPOCH: '1767225600' },
    ...(width ? { width } : {}),
  });
  sessions.push(s);
  return s.start();
}

const answersOf = (dir: string) => JSON.parse(readFileSync(path.join(dir, 'rate-limit.answers.json'), 'utf8'));
const count = (text: string, needle: string) => text.split(needle).length - 1;

/** Flags that answer items 3-7 so a test can focus on the rest. */
const LATER_ITEMS = [
  '--identities',
  'unknown',
  '--endpoint',
  'none',
  '--typical-rps',
  'unknown',
  '--peak-rps',
  'unknown',
  '--capacity-rps',
  'unknown',
  '--burstiness',
  'unknown',
  '--clients',
  'unknown',
  '--users',
  'unknown',
  '--plan',
  'none',
  '--fail-mode',
  'rule-of-thumb',
  '--outbound',
  'none',
];

describe('init in a pseudo-terminal', () => {
  it('tmux is installed (scripts/setup.sh installs it)', () => {
    expect(HAVE_TMUX).toBe(true);
  });
});

describe('init in a pseudo-terminal (tmux)', () => {
  it(
    'express + ioredis: the whole interview by keystrokes; a bad number is refused with a message',
    async () => {
      const dir = project('express-ioredis');
      const t = start(dir, []);
      const first = await t.waitForPrompt('Format of the design document?');
      // Detection is printed, with its source file, before the first question.
      expect(first.indexOf('framework: express (package.json')).toBeGreaterThanOrEqual(0);
      expect(first.indexOf('framework: express (package.json')).toBeLessThan(first.indexOf('? Format of the design document?'));
      t.keys('Down', 'Enter');
      await t.waitForPrompt('Write the document to');
      t.type('docs/limits.md');
      t.keys('Enter');
      await t.waitForPrompt('Folder for the generated code');
      t.keys('Enter');
      await t.waitForPrompt('What should rate limiting protect against?');
      t.keys('Space', 'Down', 'Space', 'Enter');
      await t.waitForPrompt('Keep what was found for the stack: framework express, language JavaScript, store redis (package.json)?');
      t.keys('Enter');
      await t.waitForPrompt('How does the API run in production?');
      t.keys('Down', 'Enter');
      await t.waitForPrompt('How many instances at peak?');
      t.type('abc');
      t.keys('Enter');
      await t.waitFor('"abc" is not a number: type digits only, e.g. 6');
      t.keys('C-u');
      t.type('3');
      t.keys('Enter');
      await t.waitForPrompt('Is there an API gateway or reverse proxy in front of the API?');
      t.keys('Down', 'Down', 'Down', 'Down', 'Down', 'Enter'); // None
      await t.waitForPrompt('What can requests be keyed on?');
      t.keys('Space', 'Down', 'Down', 'Down', 'Space', 'Enter'); // API key, Client IP
      await t.waitForPrompt('Which endpoints need limits of their own');
      t.keys('Enter'); // add by hand
      await t.waitForPrompt('Route of the endpoint');
      t.type('/login');
      t.keys('Enter');
      await t.waitForPrompt('Method of /login?');
      t.keys('Down', 'Enter'); // POST
      await t.waitForPrompt('What kind of endpoint is POST /login?');
      t.keys('Enter'); // the guess: auth
      await t.waitForPrompt('Add another endpoint?');
      t.keys('Enter');
      await t.waitForPrompt('Typical requests per second');
      t.type('50');
      t.keys('Enter');
      await t.waitForPrompt('Peak requests per second?');
      t.type('200');
      t.keys('Enter');
      await t.waitForPrompt('Requests per second the backend can safely serve');
      t.type('lots');
      t.keys('Enter');
      // the refusal says that no number is an answer too, and "don't know" is one
      await t.waitFor('"lots" is not a number: type digits only, e.g. 1500, or leave it empty if unknown');
      t.keys('C-u');
      t.type("don't know");
      t.keys('Enter');
      await t.waitForPrompt('How bursty is the traffic?');
      t.keys('Down', 'Enter'); // moderate
      await t.waitForPrompt('How many distinct clients'); // keyed on an API key: asked
      t.keys('Enter');
      await t.waitForPrompt('How many user accounts?');
      t.keys('Enter');
      // optional branches offer No first: Enter opens no sub-questions
      const plans = await t.waitForPrompt('Have limits been promised to customers');
      expect(plans.slice(plans.lastIndexOf('Have limits been promised'))).toMatch(/❯ No\s+Yes/);
      t.keys('Enter'); // No
      await t.waitForPrompt("If the limiter's store (e.g. Redis) is down");
      t.keys('Enter'); // rule of thumb
      const outbound = await t.waitForPrompt('Does the API call third-party APIs');
      expect(outbound.slice(outbound.lastIndexOf('Does the API call'))).toMatch(/❯ No\s+Yes/);
      t.keys('Enter'); // No
      expect(await t.waitExit()).toBe(0);
      const screen = t.screen();
      expect(screen).toMatch(/RULE\s+LAYER\s+RATE\s+FAIL MODE/);
      expect(screen).toMatch(/docs\/limits\.md\s+the design document/);

      expect(answersOf(dir)).toEqual({
        $schema: './node_modules/rl-design/schemas/answers.schema.json',
        project: { name: 'shop-api' },
        output: { format: 'markdown', path: 'docs/limits.md' },
        goals: ['overload', 'abuse'],
        stack: { language: 'JavaScript', framework: 'express', topology: 'horizontal', instances: 3, gateway: 'none', store: 'redis' },
        identities: ['api-key', 'ip'],
        endpoints: [{ name: 'POST /login', method: 'POST', route: '/login', class: 'auth', authKind: 'login', anonymous: true }],
        traffic: { typicalRps: 50, peakRps: 200, burstiness: 'moderate' },
        plans: [],
        failure: { byClass: { auth: 'closed' } },
        outbound: [],
        // the limiters the scan found, as answers: the design sets them beside their replacements
        existing: {
          limiters: [
            {
              kind: 'express-rate-limit',
              name: 'limiter',
              source: 'src/app.js:12',
              keyedOn: 'ip',
              limit: 100,
              windowSeconds: 60,
              algorithm: 'fixed-window',
              // no store option in the scanned call: express-rate-limit's default, counted in each process
              store: 'in-process',
            },
            {
              kind: 'express-rate-limit',
              name: 'loginLimiter',
              source: 'src/app.js:16',
              method: 'POST',
              path: '/login',
              match: 'exact',
              keyedOn: 'other',
              limit: 5,
              windowSeconds: 900,
              algorithm: 'fixed-window',
              store: 'in-process',
            },
          ],
        },
      });
      expect(readFileSync(path.join(dir, 'docs/limits.md'), 'utf8')).toContain('shop-api');
    },
    TIMEOUT,
  );

  it(
    'fastify + OpenAPI: detected endpoints confirmed; a plan with a quota; a bad time zone is refused with a message',
    async () => {
      const dir = project('fastify-openapi');
      const t = start(dir, [
        '--format',
        'markdown',
        '--code-dir',
        'none',
        '--goals',
        'quotas,abuse',
        '--topology',
        'single',
        '--gateway',
        'none',
        '--store',
        'redis',
        '--typical-rps',
        'unknown',
        '--peak-rps',
        '300',
        '--capacity-rps',
        'unknown',
        '--burstiness',
        'unknown',
        '--users',
        'unknown',
        '--fail-mode',
        'rule-of-thumb',
        '--outbound',
        'none',
      ]);
      // no --clients: keyed on users only (openapi.yaml), the API-key client count is not asked
      await t.waitForPrompt('Write the document to (docs/rate-limit-design.md)');
      t.keys('Enter');
      await t.waitForPrompt('Keep what was found for the stack: framework fastify, language TypeScript (package.json)?');
      t.keys('y', 'Enter');
      await t.waitForPrompt('Keep the identities found: user (openapi.yaml)?');
      t.keys('Enter');
      const list = await t.waitForPrompt('Use these 14 endpoints?');
      expect(list).toContain('Endpoints found in openapi.yaml:');
      expect(list).toMatch(/POST\s+\/v1\/auth\/login\s+auth \(login\)/);
      t.keys('Enter');
      await t.waitForPrompt('Have limits been promised to customers');
      t.keys('Down', 'Enter'); // Yes
      await t.waitForPrompt('Name of plan 1');
      t.type('free');
      t.keys('Enter');
      await t.waitForPrompt('Rate promised on free');
      t.type('60/minute');
      t.keys('Enter');
      await t.waitForPrompt('Quota on free');
      t.type('1000');
      t.keys('Enter');
      await t.waitForPrompt('Add another plan?');
      t.keys('Enter');
      await t.waitForPrompt('When do quotas reset?');
      t.keys('Enter'); // calendar month
      await t.waitForPrompt('Time zone the quota period follows');
      t.type('Mars/Olympus');
      t.keys('Enter');
      await t.waitFor('"Mars/Olympus" must be an IANA time zone such as UTC, Europe/Berlin or America/New_York');
      t.keys('C-u');
      t.type('Europe/Berlin');
      t.keys('Enter');
      await t.waitForPrompt('When a customer uses up the quota');
      t.keys('Enter'); // stop
      expect(await t.waitExit()).toBe(0);

      const a = answersOf(dir);
      expect(a.endpoints).toHaveLength(14);
      expect(a.identities).toEqual(['user']);
      expect(a.plans).toEqual([{ name: 'free', rate: { requests: 60, per: 'minute' }, quota: 1000 }]);
      expect(a.quotas).toEqual({ reset: { kind: 'calendar', period: 'month', timeZone: 'Europe/Berlin' }, exhaustion: 'hard' });
      // layout auto: the one file asked for, or the linked folder beside it once the document
      // passes the size thresholds (render/document.ts chooseLayout); exactly one of them
      const single = existsSync(path.join(dir, 'docs/rate-limit-design.md'));
      const folder = existsSync(path.join(dir, 'docs/rate-limit-design/README.md'));
      expect(single !== folder, `single ${single}, folder ${folder}`).toBe(true);
      expect(t.screen()).toMatch(/quota-free\s+middleware\s+1,000\/calendar month \(Europe\/Berlin\)/);
    },
    TIMEOUT,
  );

  it(
    'nginx only: detected stack rejected and re-answered; a bad CIDR is refused with a message',
    async () => {
      const dir = project('nginx-only');
      const t = start(dir, ['--format', 'markdown', '--out', 'docs/d.md', '--code-dir', 'none', '--goals', 'overload', ...LATER_ITEMS]);
      await t.waitForPrompt('Keep what was found for the stack: gateway nginx, trusted proxies 10.0.0.0/8 (nginx.conf)?');
      t.keys('n', 'Enter');
      await t.waitForPrompt('Which web framework serves the API?');
      t.keys('Enter'); // Express
      await t.waitForPrompt('TypeScript or JavaScript?');
      t.keys('Enter');
      await t.waitForPrompt('How does the API run in production?');
      t.keys('Enter'); // one instance
      await t.waitForPrompt('Is there an API gateway or reverse proxy');
      t.keys('Enter'); // default: the detected nginx
      // one instance: one nginx node by default, offered as the design assumes it
      await t.waitForPrompt(
        'How many nginx nodes serve the API? Each counts on its own and gets ceiling / nodes (e.g. 3; unknown to clear) (one per application instance by default): (1)',
      );
      t.keys('C-u');
      t.type('0');
      t.keys('Enter');
      await t.waitFor('0 must be greater than 0, e.g. 3, or type unknown to clear it');
      t.keys('C-u');
      t.type('2');
      t.keys('Enter');
      await t.waitForPrompt('Is Redis (or a compatible store) available');
      t.keys('Enter');
      await t.waitForPrompt('Address ranges your nginx tier sends from');
      t.type('10.0.0.0/33');
      t.keys('Enter');
      await t.waitFor('"10.0.0.0/33" must be an IPv4 or IPv6 address or CIDR, e.g. 10.0.0.0/8 or fd00::/8');
      t.keys('C-u');
      t.type('10.1.0.0/16, 192.168.0.0/16');
      t.keys('Enter');
      expect(await t.waitExit()).toBe(0);
      expect(answersOf(dir).stack).toEqual({
        language: 'TypeScript',
        framework: 'express',
        topology: 'single',
        gateway: 'nginx',
        gatewayNodes: 2,
        store: 'redis',
        trustedProxies: ['10.1.0.0/16', '192.168.0.0/16'],
      });
      expect(existsSync(path.join(dir, 'docs/d.md'))).toBe(true);
    },
    TIMEOUT,
  );

  it(
    'empty folder: items 1 and 2 are asked twice at most, then recorded as unknown (generic design)',
    async () => {
      const dir = project('empty');
      const t = start(dir, ['--format', 'markdown', '--out', 'docs/d.md', '--code-dir', 'none', ...LATER_ITEMS]);
      const first = await t.waitForPrompt('What should rate limiting protect against?');
      expect(first).toContain('no package.json, OpenAPI file, nginx, Envoy or Kong configuration found');
      t.keys('Down', 'Down', 'Down', 'Down', 'Space', 'Enter'); // Don't know
      const again = await t.waitForPrompt('Asking once more: what should rate limiting protect against?');
      expect(again).toContain('Examples, to help decide:');
      t.keys('Down', 'Down', 'Down', 'Down', 'Space', 'Enter');
      await t.waitForPrompt('Which web framework serves the API?');
      t.keys('Up', 'Enter'); // Don't know (the list wraps)
      await t.waitForPrompt('Asking once more: which web framework serves the API?');
      t.keys('Up', 'Enter');
      expect(await t.waitExit()).toBe(0);
      const screen = t.screen();
      expect(count(screen, 'rate limiting protect against?')).toBe(2);
      expect(count(screen, 'which web framework serves the API?') + count(screen, 'Which web framework serves the API?')).toBe(2);
      expect(screen).not.toContain('How does the API run in production?');
      expect(screen).toContain('generic design');
      const a = answersOf(dir);
      expect(a.unknown).toEqual(['goals', 'stack']);
      expect(a.goals).toBeUndefined();
      expect(a.stack).toBeUndefined();
      expect(existsSync(path.join(dir, 'docs/d.md'))).toBe(true);
    },
    TIMEOUT,
  );

  it(
    'Ctrl-C mid-interview: exit 130, one line, no answers file and no document',
    async () => {
      const dir = project('fastify-openapi');
      const t = start(dir, []);
      await t.waitForPrompt('Format of the design document?');
      t.keys('Enter');
      await t.waitForPrompt('Write the document to');
      t.keys('Enter');
      await t.waitForPrompt('Folder for the generated code');
      t.keys('Enter');
      await t.waitForPrompt('What should rate limiting protect against?');
      t.keys('Space');
      t.keys('C-c');
      expect(await t.waitExit()).toBe(130);
      expect(t.screen()).toContain('rl-design: Cancelled: nothing was written.');
      expect(existsSync(path.join(dir, 'rate-limit.answers.json'))).toBe(false);
      expect(existsSync(path.join(dir, 'docs'))).toBe(false);
    },
    TIMEOUT,
  );

  it(
    'previous answers: every question shows its previous value as the default, labelled with the file; Enter keeps each, and the file is not rewritten',
    async () => {
      const dir = project('fastify-openapi');
      const file = path.join(dir, 'rate-limit.answers.json');
      writeFileSync(file, PREVIOUS_TEXT);
      const before = statSync(file);
      const from = '(previous answers in rate-limit.answers.json)';
      const t = start(dir, [], 400);
      const first = await t.waitForPrompt(
        'Format of the design document? (default: Markdown, from previous answers in rate-limit.answers.json)',
      );
      expect(first).toContain(
        'Read the previous answers in rate-limit.answers.json: each question offers its previous answer as the default (Enter keeps it)',
      );
      expect(first).toMatch(/❯ Markdown/);
      t.keys('Enter');
      await t.waitForPrompt('Write the document to (default from previous answers in rate-limit.answers.json) (docs/limits.md)');
      t.keys('Enter');
      await t.waitForPrompt(
        'Folder for the generated code (Lua scripts, middleware, gateway config), e.g. src/rate-limit; "none" for none (default from previous answers in rate-limit.answers.json): (ratelimit)',
      );
      t.keys('Enter');
      const goals = await t.waitForPrompt(
        'What should rate limiting protect against? (space to pick, enter when done) (default: overload, abuse, fairness, quotas, from previous answers in rate-limit.answers.json)',
      );
      for (const name of ['Overload', 'Abuse', 'Fairness', 'Business quotas']) expect(goals).toMatch(new RegExp(`◉ ${name}`));
      expect(goals).toMatch(/◯ Don't know/);
      t.keys('Enter');
      await t.waitForPrompt(
        `Keep what was found for the stack: framework express, language TypeScript, topology horizontal, instances 6, gateway nginx, store redis-cluster, trusted proxies 10.20.0.0/16 ${from}? (Y/n)`,
      );
      t.keys('Enter');
      await t.waitForPrompt(`Keep the identities found: api-key, tenant, user, ip ${from}? (No to choose them yourself) (Y/n)`);
      t.keys('Enter');
      const list = await t.waitForPrompt('Use these 3 endpoints? (Y/n)');
      expect(list).toContain('Endpoints in the previous answers in rate-limit.answers.json:');
      expect(list).toMatch(/POST\s+\/v1\/exports\s+export/);
      t.keys('Enter');
      await t.waitForPrompt(
        `Keep the traffic: typical rps 800, peak rps 2,400, burstiness high, clients 5,000, tenants 1,200, users 90,000 ${from}? (Y/n)`,
      );
      t.keys('Enter');
      await t.waitForPrompt(
        `Keep the promised limits: plans Free 60/minute, quota 10,000; Pro 600/minute, quota 1,000,000, quotas reset each calendar month (Europe/Berlin), when used up hard ${from}? (Y/n)`,
      );
      t.keys('Enter');
      await t.waitForPrompt(`Keep the failure posture (when the store is down): auth closed, read open, export closed ${from}? (Y/n)`);
      t.keys('Enter');
      await t.waitForPrompt(`Keep the third-party APIs: Stripe 100/second, SendGrid 600/minute ${from}? (Y/n)`);
      t.keys('Enter');
      expect(await t.waitExit()).toBe(0);
      const screen = t.screen();
      expect(screen).toContain('rate-limit.answers.json: no answer changed; the file is left as it was.');
      expect(screen).not.toContain('Replace it?');
      expect(readFileSync(file, 'utf8')).toBe(PREVIOUS_TEXT);
      const after = statSync(file);
      expect(after.ino).toBe(before.ino);
      expect(after.mtimeMs).toBe(before.mtimeMs);
      expect(readFileSync(path.join(dir, 'docs/limits.md'), 'utf8')).toContain('Acme Orders API');
    },
    TIMEOUT,
  );

  it(
    'previous answers: an offer turned down asks its questions with the previous values as defaults; one number changed, everything else kept',
    async () => {
      const dir = project('empty');
      const file = path.join(dir, 'rate-limit.answers.json');
      writeFileSync(file, PREVIOUS_TEXT);
      const t = start(
        dir,
        ['--format', 'markdown', '--out', 'docs/limits.md', '--code-dir', 'ratelimit', '--goals', 'overload,abuse,fairness,quotas'],
        400,
      );
      for (const prompt of ['Keep what was found for the stack', 'Keep the identities found', 'Use these 3 endpoints?']) {
        await t.waitForPrompt(prompt);
        t.keys('Enter');
      }
      await t.waitForPrompt('Keep the traffic');
      t.keys('n', 'Enter');
      await t.waitForPrompt(
        'Typical requests per second, across the whole API? (e.g. 120; unknown to clear) (default from previous answers in rate-limit.answers.json) (800)',
      );
      t.keys('Enter');
      await t.waitForPrompt(
        'Peak requests per second? (e.g. 600; unknown to clear) (default from previous answers in rate-limit.answers.json) (2400)',
      );
      t.type('3000');
      t.keys('Enter');
      await t.waitForPrompt('Requests per second the backend can safely serve, if measured? (e.g. 1500; empty if unknown)');
      t.keys('Enter');
      const bursty = await t.waitForPrompt('How bursty is the traffic? (default: high, from previous answers in rate-limit.answers.json)');
      expect(bursty).toMatch(/❯ High/);
      t.keys('Enter');
      await t.waitForPrompt(
        'How many distinct clients (API keys or apps)? (e.g. 2000; unknown to clear) (default from previous answers in rate-limit.answers.json) (5000)',
      );
      t.keys('Enter');
      await t.waitForPrompt(
        'How many tenants / organisations? (e.g. 300; unknown to clear) (default from previous answers in rate-limit.answers.json) (1200)',
      );
      t.keys('Enter');
      await t.waitForPrompt(
        'How many user accounts? (e.g. 50000; unknown to clear) (default from previous answers in rate-limit.answers.json) (90000)',
      );
      t.keys('Enter');
      for (const prompt of ['Keep the promised limits', 'Keep the failure posture', 'Keep the third-party APIs']) {
        await t.waitForPrompt(prompt);
        t.keys('Enter');
      }
      expect(await t.waitExit()).toBe(0);
      expect(t.screen()).toContain('rate-limit.answers.json: changed traffic.peakRps; every other answer kept.');
      const expected = Answers.parse(PREVIOUS) as Record<string, unknown>;
      expect(answersOf(dir)).toEqual({ ...expected, traffic: { ...(expected.traffic as object), peakRps: 3000 } });
    },
    TIMEOUT,
  );
  it(
    'wraps the detection report and the file list to a narrow terminal, under their own text',
    async () => {
      const dir = project('express-ioredis');
      const t = start(
        dir,
        ['--yes', '--format', 'markdown', '--out', 'docs/a-rather-long-folder-name/limits.md', '--goals', 'overload'],
        64,
      );
      expect(await t.waitExit()).toBe(0);
      const screen = t.screen();
      const lines = screen.split('\n');
      // capture-pane joins the terminal's own wraps (-J): every line under 64 columns is one rl-design broke itself
      const long = lines.filter((l) => l.length > 64);
      expect(long, long.join('\n')).toEqual([]);
      expect(screen).toContain('framework: express (package.json');
      // the file's phrase goes on under the phrase column, not at the left margin
      const at = lines.findIndex((l) => l.includes('rate-limit.answers.json'));
      expect(lines[at + 1]).toMatch(/^ {6,}\S/);
    },
    TIMEOUT,
  );
});
