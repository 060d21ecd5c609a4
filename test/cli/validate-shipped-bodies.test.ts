/**
 * validate reads the gateway files the code folder holds, as shipped: a hand edit (or a merge) of
 * an edge 429 body that leaves the response contract fails constraint 3, naming the file, the
 * field, what the design says and what the file says. The files as generate wrote them pass.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/examples.js';
import { runCli, tempDir } from '../helpers/cli.js';

const DATE = '2026-12-03';
const keyless = JSON.parse(readFileSync(path.join(ROOT, 'test/fixtures/edge-cost/keyless-envoy.answers.json'), 'utf8'));
delete keyless.$schema;

/** A folder with a.json (the keyless census API on `gateway`, its code folder code/) and what generate wrote from it. */
function generated(gateway: string): string {
  const dir = tempDir();
  const answers = { ...keyless, stack: { ...keyless.stack, gateway }, output: { format: 'markdown', path: 'out/', codeDir: 'code' } };
  writeFileSync(path.join(dir, 'a.json'), JSON.stringify(answers, null, 2));
  const r = runCli(['generate', '-a', 'a.json', '--date', DATE], { cwd: dir });
  expect(r.code, r.stderr + r.stdout).toBe(0);
  return dir;
}

function change(dir: string, file: string, edit: (content: string) => string): void {
  const abs = path.join(dir, 'code', file);
  const before = readFileSync(abs, 'utf8');
  const after = edit(before);
  expect(after, `the edit changes ${file}`).not.toBe(before);
  writeFileSync(abs, after);
}

function changeJson(dir: string, file: string, edit: (doc: any) => void): void {
  change(dir, file, (c) => {
    const doc = JSON.parse(c);
    edit(doc);
    return `${JSON.stringify(doc, null, 2)}\n`;
  });
}

const DOCS = 'https://census.example/docs/limits';

const CASES: { gateway: string; file: string; edit: (dir: string, file: string) => void; message: string }[] = [
  {
    gateway: 'nginx',
    file: 'gateway/nginx-server.conf',
    edit: (dir, file) => change(dir, file, (c) => c.replace(/(return 429 .*)RATE_LIMITED/, '$1SLOW_DOWN')),
    message:
      'gateway/nginx-server.conf answers an edge 429 (return 429 in location @rl_too_many_requests) whose body field code is "SLOW_DOWN", while the design\'s response contract says "RATE_LIMITED".',
  },
  {
    gateway: 'envoy',
    file: 'gateway/envoy-local-ratelimit.yaml',
    edit: (dir, file) => change(dir, file, (c) => c.replace(/(\n\s+documentation: ).*/, '$1https://elsewhere.example/docs')),
    message: `gateway/envoy-local-ratelimit.yaml answers an edge 429 (the local reply mapper for 429 (json_format)) whose body field documentation is "https://elsewhere.example/docs", while the design's response contract says "${DOCS}".`,
  },
  {
    gateway: 'kong',
    file: 'gateway/kong.yaml',
    edit: (dir, file) => change(dir, file, (c) => c.replace(/error_message: .*/, 'error_message: Slow down')),
    message:
      'whose body field message is "Slow down", while the design\'s response contract says "Too many requests: retry after the time in Retry-After, with jitter."',
  },
  {
    gateway: 'aws-api-gateway',
    file: 'gateway/aws-api-gateway.json',
    edit: (dir, file) =>
      changeJson(dir, file, (doc) => {
        const b = doc.wafCustomResponseBodies['rl-too-many-requests'];
        const body = JSON.parse(b.Content);
        delete body.code;
        b.Content = JSON.stringify(body);
      }),
    message:
      'gateway/aws-api-gateway.json answers an edge 429 (WAF custom response body rl-too-many-requests) whose body field code is absent, while the design\'s response contract says "RATE_LIMITED".',
  },
  {
    gateway: 'cloudflare',
    file: 'gateway/cloudflare-ratelimit.json',
    edit: (dir, file) =>
      changeJson(dir, file, (doc) => {
        const r = doc.rules[0].action_parameters.response;
        r.content = r.content.slice(0, -1);
      }),
    message:
      "gateway/cloudflare-ratelimit.json answers an edge 429 (the custom response of rule global-ceiling) with a body a client cannot read as the contract's JSON",
  },
];

describe('validate reads the edge 429 bodies of the gateway files as shipped (built binary)', () => {
  for (const c of CASES) {
    it(`${c.gateway}: the generated files pass; a hand-edited body fails constraint 3 naming the field`, () => {
      const dir = generated(c.gateway);
      const clean = runCli(['validate', '-a', 'a.json'], { cwd: dir });
      expect(clean.code, clean.stdout + clean.stderr).toBe(0);
      expect(clean.stdout).toMatch(/\(the \d+ generated files as shipped in code, hand edits included\)/);
      c.edit(dir, c.file);
      const r = runCli(['validate', '-a', 'a.json'], { cwd: dir });
      expect(r.code, r.stdout + r.stderr).toBe(1);
      expect(r.stdout).toMatch(/FAIL {2}3\. /);
      expect(r.stdout).toContain(c.message);
      // --json carries the same finding
      const json = JSON.parse(runCli(['validate', '-a', 'a.json', '--json'], { cwd: dir }).stdout);
      expect(json.shipped.codeDir).toBe('code');
      expect(json.shipped.files).toContain(c.file);
      const messages = json.constraints.find((x: any) => x.number === 3).findings.map((f: any) => f.message);
      expect(messages.join('\n')).toContain(c.message);
    });
  }

  it('--code-dir names the folder to read, relative to the current folder', () => {
    const dir = generated('nginx');
    change(dir, 'gateway/nginx-server.conf', (c) => c.replace(/(return 429 .*)RATE_LIMITED/, '$1SLOW_DOWN'));
    const answers = JSON.parse(readFileSync(path.join(dir, 'a.json'), 'utf8'));
    // answers naming no code folder: the generated files are checked, unless --code-dir names one
    writeFileSync(path.join(dir, 'a.json'), JSON.stringify({ ...answers, output: { format: 'markdown', path: 'out/' } }));
    expect(runCli(['validate', '-a', 'a.json'], { cwd: dir }).code).toBe(0);
    const r = runCli(['validate', '-a', 'a.json', '--code-dir', 'code'], { cwd: dir });
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stdout).toContain('whose body field code is "SLOW_DOWN"');
    // SARIF names the file under the folder it was read from
    const sarif = runCli(['validate', '-a', 'a.json', '--code-dir', 'code', '--sarif'], { cwd: dir });
    expect(sarif.code).toBe(1);
    const result = JSON.parse(sarif.stdout).runs[0].results.find((x: any) => x.properties.messageId === 'edgeBodyField');
    expect(result.locations[0].physicalLocation.artifactLocation.uri).toBe('code/gateway/nginx-server.conf');
  });
});

describe('validate reads every generated file the code folder holds (built binary)', () => {
  /** saas-platform (middleware, nginx, alerts) generated into a temp folder, its code in code/. */
  function saasGenerated(): string {
    const dir = tempDir();
    const answers = JSON.parse(readFileSync(path.join(ROOT, 'examples/saas-platform.answers.json'), 'utf8'));
    delete answers.$schema;
    for (const f of ['saas-platform.openapi.yaml']) writeFileSync(path.join(dir, f), readFileSync(path.join(ROOT, 'examples', f)));
    writeFileSync(path.join(dir, 'a.json'), JSON.stringify({ ...answers, output: { format: 'markdown', path: 'out/', codeDir: 'code' } }));
    const r = runCli(['generate', '-a', 'a.json', '--date', DATE], { cwd: dir });
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const clean = runCli(['validate', '-a', 'a.json'], { cwd: dir });
    expect(clean.code, clean.stdout + clean.stderr).toBe(0);
    return dir;
  }

  it("a limit edited by hand in middleware/design.ts fails constraint 1, naming the value and the design's", () => {
    const dir = saasGenerated();
    change(dir, 'middleware/design.ts', (c) => c.replace(/(id: "fairness-pro",[\s\S]*?\n\s+limit: )\d+,/, '$19999,'));
    const r = runCli(['validate', '-a', 'a.json'], { cwd: dir });
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stdout).toMatch(/FAIL {2}1\. /);
    expect(r.stdout).toMatch(/middleware\/design\.ts holds DESIGN\.rules\[\d+\]\.limit = 9999, where this design gives 600/);
  });

  it('an alert removed from monitoring/ratelimit-alerts.yaml fails constraint 5', () => {
    const dir = saasGenerated();
    change(dir, 'monitoring/ratelimit-alerts.yaml', (c) => {
      const at = c.indexOf('- alert: RateLimitFailOpen');
      return c.slice(0, at) + c.slice(c.indexOf('- alert:', at + 5));
    });
    const r = runCli(['validate', '-a', 'a.json'], { cwd: dir });
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stdout).toMatch(/FAIL {2}5\. /);
    expect(r.stdout).toContain('monitoring/ratelimit-alerts.yaml has no rule of that name');
  });
});
