/**
 * Rules entries that would silently do nothing or count two callers in one Redis key: validate
 * and generate exit 2, naming the field and what is allowed, and write nothing.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/examples.js';
import { runCli, tempDir } from '../helpers/cli.js';

const keyless = JSON.parse(readFileSync(path.join(ROOT, 'test/fixtures/edge-cost/keyless-nginx.answers.json'), 'utf8'));
const saas = JSON.parse(readFileSync(path.join(ROOT, 'examples/saas-platform.answers.json'), 'utf8'));
delete saas.$schema;

const store = { algorithm: 'gcra', primitive: 'redis-lua', layer: 'middleware', failMode: 'open', ttlSeconds: 60, burst: 10 };

function refused(answers: unknown, expected: string[]): void {
  const dir = tempDir();
  writeFileSync(path.join(dir, 'a.json'), JSON.stringify(answers, null, 2));
  for (const args of [
    ['validate', '-a', 'a.json'],
    ['generate', '-a', 'a.json', '--out', 'out/', '--code-dir', 'code/', '--format', 'markdown'],
  ]) {
    const r = runCli(args, { cwd: dir });
    expect(r.code, r.stderr + r.stdout).toBe(2);
    expect(r.stderr).toContain('a.json has 1 problem(s)');
    for (const text of expected) expect(r.stderr).toContain(text);
  }
  expect(existsSync(path.join(dir, 'out'))).toBe(false);
  expect(existsSync(path.join(dir, 'code'))).toBe(false);
}

describe('rules entries the design cannot apply as written', () => {
  it('refuses an entry for an id the design derives by cost at the edge', () => {
    refused({ ...keyless, rules: [{ id: 'anonymous-per-ip-cost-10', rate: { requests: 2, per: 'second' } }] }, [
      '$.rules[0].id: "anonymous-per-ip-cost-10" is a rule the design derives from anonymous-per-ip',
      'ids a rules entry can override or remove: global-ceiling, anonymous-per-ip',
    ]);
  });

  it('refuses removing an id the design does not generate', () => {
    refused({ ...keyless, rules: [{ id: 'anonymous-per-ipp', remove: true }] }, [
      '$.rules[0].id: "anonymous-per-ipp" is removed, but the design generates no rule with this id',
    ]);
  });

  it('refuses two identities whose hand-written keys can be one Redis key', () => {
    refused(
      {
        ...saas,
        rules: [
          {
            ...store,
            id: 'search-user',
            identity: 'user',
            endpoints: ['search-orders'],
            key: '{<user-id>}:s',
            rate: { requests: 5, per: 'second' },
          },
          {
            ...store,
            id: 'search-key',
            identity: 'api-key',
            endpoints: ['search-orders'],
            key: '{<api-key-id>}:s',
            rate: { requests: 5, per: 'second' },
          },
        ],
      },
      [
        `$.rules[1].key: "rl:{<api-key-id>}:s" (rule search-key, per api-key) and rules[0] (search-user)'s "rl:{<user-id>}:s" (per user) can name the same Redis key`,
        'both use rl:{42}:s',
        'so this is refused',
      ],
    );
  });

  it('refuses one identity and one key kept by two scripts', () => {
    refused(
      {
        ...saas,
        rules: [
          {
            ...store,
            id: 'a-user',
            identity: 'user',
            endpoints: ['search-orders'],
            key: '{u:<user-id>}:x',
            rate: { requests: 5, per: 'second' },
          },
          {
            ...store,
            algorithm: 'sliding-window-log',
            id: 'b-user',
            identity: 'user',
            endpoints: ['export-orders'],
            key: '{u:<user-id>}:x',
            rate: { requests: 5, per: 'minute' },
          },
        ],
      },
      [
        '$.rules[1].key: "rl:{u:<user-id>}:x" (rule b-user) and rules[0] (a-user)\'s "rl:{u:<user-id>}:x" both count per user under one key',
      ],
    );
  });
});
