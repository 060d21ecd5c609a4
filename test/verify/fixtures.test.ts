/**
 * verify passes designs that are right: every answers-file fixture of test/design/fixtures
 * (anonymous behind a CDN, every answer unknown, mixed fail modes, a rolling quota with soft
 * overage, Koa in process, auth on a cluster layout), through the built CLI, on a redis-server
 * it starts itself. Its expectations are the runtime's: a rolling quota's refusal points at the
 * moment today's daily bucket leaves the window, a fast GCRA denial may run 2 ms over one unit.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/examples.js';
import { runCli } from '../helpers/cli.js';

const DIR = path.join(ROOT, 'test', 'design', 'fixtures');
const FIXTURES = readdirSync(DIR)
  .filter((f) => f.endsWith('.answers.json'))
  .sort();

describe('verify passes every fixture design', () => {
  it('has the six kinds of API', () => {
    expect(FIXTURES.length).toBeGreaterThanOrEqual(6);
  });

  it.each(FIXTURES)('%s', (file) => {
    const r = runCli(['verify', '-a', path.join(DIR, file)]);
    expect(r.stdout + r.stderr).toContain('Verification passed.');
    expect(r.code, r.stdout + r.stderr).toBe(0);
    // a rolling quota beside its identity's fairness bucket: verify loads the script that runs them
    // (identity-limits.lua), not fixed-window.lua, which the design does not ship
    if (file.startsWith('rolling-')) {
      const loaded = /Loaded ([^(]*)\(/.exec(r.stdout)?.[1] ?? '';
      expect(loaded).toContain('identity-limits.lua');
      expect(loaded).not.toContain('fixed-window.lua');
    }
  });
});
