/** A bad value in the access answers stops the built CLI with exit 2, naming the field, before anything is written. */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { runCli, tempDir } from '../helpers/cli.js';
import { ROOT } from '../helpers/examples.js';

const FIXTURE = path.join(ROOT, 'test', 'design', 'fixtures', 'access-features.answers.json');

it('exits 2 on a bad deny-list CIDR, names the field, and writes no document', () => {
  const dir = tempDir();
  const answers = JSON.parse(readFileSync(FIXTURE, 'utf8')) as { access: { deny: { cidrs: string[] } } };
  answers.access.deny.cidrs = ['203.0.113.0/24', '300.1.1.1'];
  const file = path.join(dir, 'bad.answers.json');
  writeFileSync(file, JSON.stringify(answers));
  for (const args of [
    ['validate', '-a', file],
    ['generate', '-a', file, '--out', path.join(dir, 'doc.md')],
  ]) {
    const r = runCli(args, { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('$.access.deny.cidrs[1]: must be an IPv4 or IPv6 address or CIDR');
  }
  expect(existsSync(path.join(dir, 'doc.md'))).toBe(false);
});
