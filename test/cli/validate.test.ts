import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { exampleAnswers, exampleNames } from '../helpers/examples.js';
import { runCli, tempDir } from '../helpers/cli.js';

function withRules(example: string, rules: unknown[]): string {
  const dir = tempDir();
  const file = path.join(dir, 'answers.json');
  writeFileSync(file, JSON.stringify({ ...exampleAnswers(example), rules }));
  return file;
}

interface JsonReport {
  passed: boolean;
  constraints: { number: number; id: string; passed: boolean; ruleIds: string[] }[];
}

describe('rl-design validate (built binary)', () => {
  it.each(exampleNames())('passes all nine constraints on example %s', (name) => {
    const r = runCli(['validate', '--example', name]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout.match(/^ {2}(PASS|N\/A ) {2}\d\./gm)).toHaveLength(9);
    expect(r.stdout).toContain('All 9 constraints pass.');
  });

  it('emits JSON for machines', () => {
    const r = runCli(['validate', '--example', 'saas-platform', '--json']);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as JsonReport;
    expect(report.passed).toBe(true);
    expect(report.constraints.map((c) => c.number)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  const broken: { name: string; example: string; rules: unknown[]; constraint: string; ruleId?: string }[] = [
    {
      name: 'a hand-written rule drops the per-IP login row',
      example: 'consumer-auth',
      rules: [{ id: 'auth-login-per-ip', remove: true }],
      constraint: 'auth-dual-key',
    },
    {
      name: 'a hand-written rule omits its TTL',
      example: 'consumer-auth',
      rules: [
        {
          id: 'search-burst',
          endpointClass: 'read',
          identity: 'user',
          algorithm: 'gcra',
          primitive: 'redis-lua',
          key: 'rl:{u:<id>}:s',
          rate: { requests: 5, per: 'second' },
          burst: 10,
          cost: 1,
          failMode: 'open',
          layer: 'middleware',
          cardinalityBound: 1000,
        },
      ],
      constraint: 'bounded-keys',
      ruleId: 'search-burst',
    },
    {
      name: 'a hand-written rule leaves its fail mode unstated',
      example: 'minimal-generic',
      rules: [
        {
          id: 'extra',
          endpointClass: 'read',
          identity: 'ip',
          algorithm: 'gcra',
          primitive: 'redis-lua',
          key: 'rl:{ip:<ip>}:x',
          rate: { requests: 5, per: 'second' },
          burst: 10,
          cost: 1,
          layer: 'middleware',
          ttlSeconds: 2,
          cardinalityBound: 1000,
        },
      ],
      constraint: 'fail-mode',
      ruleId: 'extra',
    },
    {
      name: 'an auth rule shows its remaining count',
      example: 'consumer-auth',
      rules: [{ id: 'auth-signup-per-ip', headers: 'full' }],
      constraint: 'response-contract',
      ruleId: 'auth-signup-per-ip',
    },
    {
      name: 'a rule races with INCR then EXPIRE',
      example: 'minimal-generic',
      rules: [{ id: 'fairness-per-api-key', primitive: 'incr-then-expire' }],
      constraint: 'atomic-check',
      ruleId: 'fairness-per-api-key',
    },
    {
      name: 'a rule loses its kill switch',
      example: 'minimal-generic',
      rules: [{ id: 'global-ceiling', killSwitch: false }],
      constraint: 'shadow-rollout',
      ruleId: 'global-ceiling',
    },
  ];

  it.each(broken)('fails when $name, naming the constraint and rule', ({ example, rules, constraint, ruleId }) => {
    const file = withRules(example, rules);
    const r = runCli(['validate', '-a', file, '--json']);
    expect(r.code, r.stderr).toBe(1);
    const report = JSON.parse(r.stdout) as JsonReport;
    const c = report.constraints.find((x) => x.id === constraint);
    expect(c?.passed).toBe(false);
    if (ruleId) expect(c?.ruleIds).toContain(ruleId);
    const text = runCli(['validate', '-a', file]);
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(new RegExp(`FAIL {2}\\d\\. .*\\[${constraint}\\]`));
    if (ruleId) expect(text.stdout).toContain(`- ${ruleId}:`);
  });

  it('fails constraint 8 when invoices come from limiter counters, and 9 for per-instance outbound buckets', () => {
    const a = exampleAnswers('saas-platform');
    const dir = tempDir();
    const file = path.join(dir, 'a.json');
    writeFileSync(
      file,
      JSON.stringify({
        ...a,
        quotas: { ...a.quotas, billingSource: 'limiter-counters' },
        outbound: (a.outbound ?? []).map((o, i) => (i === 0 ? { ...o, bucket: 'per-instance' } : o)),
      }),
    );
    const report = JSON.parse(runCli(['validate', '-a', file, '--json']).stdout) as JsonReport;
    expect(report.constraints.find((c) => c.id === 'quota-billing-separation')?.passed).toBe(false);
    expect(report.constraints.find((c) => c.id === 'shared-outbound')?.passed).toBe(false);
  });

  it('prints SARIF with --sarif: exit 0 and no results on an example, exit 1 and each finding located in the answers file', () => {
    const ok = runCli(['validate', '--example', 'saas-platform', '--sarif']);
    expect(ok.code, ok.stderr).toBe(0);
    const clean = JSON.parse(ok.stdout);
    expect(clean.version).toBe('2.1.0');
    expect(clean.runs[0].tool.driver.rules).toHaveLength(9);
    expect(clean.runs[0].results).toEqual([]);

    const dir = tempDir();
    const file = path.join(dir, 'answers.json');
    writeFileSync(
      file,
      `${JSON.stringify({ ...exampleAnswers('minimal-generic'), rules: [{ id: 'global-ceiling', killSwitch: false }] }, null, 2)}\n`,
    );
    const r = runCli(['validate', '-a', 'answers.json', '--sarif'], { cwd: dir });
    expect(r.code, r.stderr).toBe(1);
    const log = JSON.parse(r.stdout);
    const result = log.runs[0].results.find((x: { ruleId: string }) => x.ruleId === 'shadow-rollout');
    expect(result.properties.matrixRuleId).toBe('global-ceiling');
    const loc = result.locations[0].physicalLocation;
    expect(loc.artifactLocation.uri).toBe('answers.json');
    const lines = readFileSync(file, 'utf8').split('\n');
    expect(lines[loc.region.startLine - 1]!.slice(loc.region.startColumn - 1)).toBe('"killSwitch": false');

    const both = runCli(['validate', '-a', file, '--sarif', '--json']);
    expect(both.code).toBe(2);
    expect(both.stdout).toBe('');
    expect(both.stderr).toContain('--sarif');
  });
});
