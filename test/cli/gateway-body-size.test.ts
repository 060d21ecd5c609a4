/**
 * A gateway refuses an edge 429 body over its size limit (AWS WAF: 10,240 characters of custom
 * response Content), and the whole web ACL with it. A long documentation URL (twice in the body)
 * beside many per-IP rule ids would pass that limit: generate and validate exit 2 naming
 * headers.docsUrl and the longest URL that fits, and write nothing. At that length the file fits.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/examples.js';
import { runCli, tempDir } from '../helpers/cli.js';

/** CustomResponseBody Content: "Length Constraints: Minimum length of 1. Maximum length of 10240." (AWS WAF API Reference) */
const WAF_BODY_MAX_CHARS = 10_240;

const keyless = JSON.parse(readFileSync(path.join(ROOT, 'test/fixtures/edge-cost/keyless-envoy.answers.json'), 'utf8'));
delete keyless.$schema;

/** 80 per-IP edge rules with ids of 80 characters, on AWS. */
const RULES = Array.from({ length: 80 }, (_, i) => ({
  id: `per-ip-${i}-${'y'.repeat(80)}`.slice(0, 80),
  identity: 'ip',
  endpoints: ['tables'],
  rate: { requests: 100, per: 'minute' },
  layer: 'edge',
}));

function answersDir(docsUrl: string): string {
  const dir = tempDir();
  const answers = {
    ...keyless,
    stack: { ...keyless.stack, gateway: 'aws-api-gateway' },
    headers: { ...keyless.headers, docsUrl },
    rules: RULES,
  };
  writeFileSync(path.join(dir, 'a.json'), JSON.stringify(answers, null, 2));
  return dir;
}

const generate = (dir: string) =>
  runCli(['generate', '-a', 'a.json', '--out', 'out/', '--code-dir', 'code/', '--format', 'markdown', '--date', '2026-12-03'], {
    cwd: dir,
  });

describe('an edge 429 body over the gateway limit (built binary)', () => {
  it('AWS WAF: a long docs URL beside many per-IP rules is refused naming headers.docsUrl; the URL it allows fits', () => {
    const long = `https://census.example/docs/${'x'.repeat(1960)}`;
    const dir = answersDir(long);
    for (const r of [generate(dir), runCli(['validate', '-a', 'a.json'], { cwd: dir })]) {
      expect(r.code, r.stdout + r.stderr).toBe(2);
      expect(r.stderr).toContain('$.headers.docsUrl: the AWS WAF custom response body (wafCustomResponseBodies Content)');
      expect(r.stderr).toContain(`over the ${WAF_BODY_MAX_CHARS.toLocaleString('en-US')} characters AWS WAF accepts`);
    }
    expect(existsSync(path.join(dir, 'out'))).toBe(false);
    expect(existsSync(path.join(dir, 'code'))).toBe(false);
    const fit = Number(/Allowed: a URL of at most ([\d,]+) characters/.exec(generate(dir).stderr)?.[1]?.replace(/,/g, ''));
    expect(fit).toBeGreaterThan(100);
    expect(fit).toBeLessThan(long.length);

    const ok = answersDir(long.slice(0, fit));
    const r = generate(ok);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const doc = JSON.parse(readFileSync(path.join(ok, 'code/gateway/aws-api-gateway.json'), 'utf8'));
    const content = doc.wafCustomResponseBodies['rl-too-many-requests'].Content as string;
    expect(content.length).toBeLessThanOrEqual(WAF_BODY_MAX_CHARS);
    // within a few characters of the limit: the URL allowed is the longest that fits
    expect(content.length).toBeGreaterThan(WAF_BODY_MAX_CHARS - 3);
    expect(runCli(['validate', '-a', 'a.json'], { cwd: ok }).code).toBe(0);
  });
});
