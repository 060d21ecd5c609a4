/**
 * Names the answers use to point at each other: a hand-written rule naming an endpoint the
 * design does not have, or two endpoints sharing a name, is bad input (exit 2, the field named,
 * what is allowed, nothing written), not a rule that silently covers nothing.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/examples.js';
import { runCli, tempDir } from '../helpers/cli.js';

const review = JSON.parse(readFileSync(path.join(ROOT, 'test/fixtures/review/express-cloudflare.answers.json'), 'utf8'));
delete review.$schema;

function write(answers: unknown): string {
  const dir = tempDir();
  writeFileSync(path.join(dir, 'a.json'), JSON.stringify(answers, null, 2));
  return dir;
}

describe('answers that name what is not there', () => {
  it('validate and generate refuse a rule naming an unknown endpoint, naming the field and the endpoints there are', () => {
    const answers = structuredClone(review);
    answers.rules[0].endpoints = ['serach'];
    const dir = write(answers);
    for (const args of [
      ['validate', '-a', 'a.json'],
      ['generate', '-a', 'a.json', '--out', 'out/', '--format', 'markdown'],
    ]) {
      const r = runCli(args, { cwd: dir });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain('$.rules[0].endpoints[0]: "serach" is not an endpoint of the design; use one of "login", "mfa"');
      expect(r.stderr).toContain('"search"');
    }
    expect(existsSync(path.join(dir, 'out'))).toBe(false);
  });

  it('refuses two endpoints with one name', () => {
    const answers = structuredClone(review);
    answers.endpoints[3].name = 'list-projects';
    const r = runCli(['validate', '-a', 'a.json'], { cwd: write(answers) });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('$.endpoints[3].name: "list-projects" is already the name of endpoints[2]');
  });

  it('accepts the review answers as they are', () => {
    const r = runCli(['validate', '-a', 'a.json'], { cwd: write(review) });
    expect(r.code, r.stderr + r.stdout).toBe(0);
  });
});
