/**
 * The access answers (allowlist, deny list, penalty box, custom identities) and the memory
 * fallback: what the design holds, what the generated data module carries, and the errors a bad
 * value gets (each naming its field).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAnswers } from '../../src/answers/load.js';
import { Answers, type AnswersInput } from '../../src/answers/schema.js';
import { buildDesign } from '../../src/design/build.js';
import { compileDesign, generateDesignData } from '../../src/codegen/middleware/index.js';
import { UserError } from '../../src/messages.js';
import { DATE, ROOT } from '../helpers/examples.js';

const FIXTURE = path.join(ROOT, 'test', 'design', 'fixtures', 'access-features.answers.json');
const answers = (): AnswersInput => JSON.parse(readFileSync(FIXTURE, 'utf8')) as AnswersInput;
const design = (input: AnswersInput = answers()) => buildDesign(Answers.parse(input), { date: DATE });

/** The problems parseAnswers reports for a changed copy of the fixture. */
function problems(change: (a: Record<string, any>) => void): string {
  const a = answers() as Record<string, any>;
  change(a);
  try {
    parseAnswers(JSON.stringify(a), 'a.json');
  } catch (error) {
    expect(error).toBeInstanceOf(UserError);
    return (error as Error).message;
  }
  throw new Error('the answers were accepted');
}

describe('access answers in the design', () => {
  it('allowlists per-caller rules only, follows the auth rows with the penalty box, and states the custom identity', () => {
    const d = design();
    expect(d.access?.allow?.tiers).toEqual(['fairness', 'quota']);
    expect(d.access?.allow?.ruleIds).toEqual(['fairness-per-api-key']);
    expect(d.access?.allow?.text).toMatch(
      /^Client addresses in 192\.0\.2\.0\/24, the verified api-key "svc-monitor" and requests to GET \/v1\/status skip/,
    );
    expect(d.access?.allow?.text).toContain('global-ceiling, auth-login-per-identity and auth-login-per-ip still count them');
    expect(d.access?.deny).toMatchObject({ cidrs: ['203.0.113.0/24'], status: 403, body: { status: 403, code: 'ACCESS_DENIED' } });
    expect(d.access?.penalty).toMatchObject({
      ruleIds: ['auth-login-per-identity', 'auth-login-per-ip'],
      refusals: 3,
      keys: { strikes: 'rl:{pb:<identity>}:strikes', box: 'rl:{pb:<identity>}:box' },
      body: { status: 429, retryAfterSeconds: 900 },
    });
    expect(d.access?.customIdentities).toEqual([
      { kind: 'tenant', from: 'the tenant claim of the verified JWT', option: 'identities.tenant' },
    ]);
    expect(d.access?.customText).toContain('identities.tenant: (req) => string | undefined');
    const step = d.rollout.steps.find((s) => s.title === 'Allowlist pass');
    expect(step?.detail).toContain('access.allow');
    expect(step?.detail).toContain('Allowlisted now: Client addresses in 192.0.2.0/24');
    expect(step?.ruleIds).toEqual(['fairness-per-api-key']);
  });

  it('states the memory fallback per fail-open rule: instances x what one bucket admits per window', () => {
    const f = design().enforcement.fallback;
    expect(f?.instances).toBe(3);
    expect(f?.ruleIds).toEqual(['global-ceiling', 'fairness-per-api-key']);
    for (const r of f?.rules ?? []) expect(r.outageMost).toBe(3 * r.normalMost);
    // fail-closed rules keep answering 503: no fallback for them
    expect(f?.ruleIds).not.toContain('auth-login-per-ip');
    // without the answer, no fallback (fail-open rules admit unchecked, as before)
    const a = answers() as Record<string, any>;
    delete a.failure.fallback;
    expect(design(a).enforcement.fallback).toBeUndefined();
  });

  it('carries the lists into the data module, with the penalty script; a design without them has no access field', () => {
    const d = design();
    const compiled = compileDesign(d);
    expect(compiled.access).toEqual({
      allow: {
        cidrs: ['192.0.2.0/24'],
        identities: [{ kind: 'api-key', value: 'svc-monitor' }],
        routes: [{ method: 'GET', route: '/v1/status' }],
        tiers: ['fairness', 'quota'],
      },
      deny: { cidrs: ['203.0.113.0/24'], identities: [{ kind: 'api-key', value: 'revoked-key' }], status: 403 },
      penalty: { tiers: ['security'], refusals: 3, withinSeconds: 600, blockSeconds: 900 },
      customIdentities: ['tenant'],
      memoryFallback: true,
    });
    expect(compiled.scripts.map((s) => s.name)).toContain('penalty');
    expect(generateDesignData(d).content).toContain('  access: {\n');
    const plain = answers() as Record<string, any>;
    delete plain.access;
    delete plain.failure.fallback;
    const bare = compileDesign(design(plain));
    expect(bare.access).toBeNull();
    expect(bare.scripts.map((s) => s.name)).not.toContain('penalty');
    expect(generateDesignData(design(plain)).content).not.toContain('access:');
  });
});

describe('access answers: bad values name their field', () => {
  it('rejects a bad CIDR, a non-4xx deny status, a zero block time, a doubled custom identity and an unknown fallback', () => {
    expect(problems((a) => (a.access.allow.cidrs = ['10.0.0.0/33']))).toContain(
      '$.access.allow.cidrs[0]: must be an IPv4 or IPv6 address or CIDR',
    );
    expect(problems((a) => (a.access.deny.cidrs = ['not-an-ip']))).toContain(
      '$.access.deny.cidrs[0]: must be an IPv4 or IPv6 address or CIDR',
    );
    expect(problems((a) => (a.access.deny.status = 200))).toContain('$.access.deny.status: must be a 4xx status, e.g. 403');
    expect(problems((a) => (a.access.penalty.blockSeconds = 0))).toContain('$.access.penalty.blockSeconds: must be greater than 0');
    expect(problems((a) => a.access.customIdentities.push({ kind: 'tenant', from: 'again' }))).toContain(
      '$.access.customIdentities: names an identity kind twice',
    );
    expect(problems((a) => (a.access.allow.identities = [{ kind: 'ip', value: '1.2.3.4' }]))).toContain(
      '$.access.allow.identities[0].kind: must be one of "api-key", "user", "tenant", "session"',
    );
    expect(problems((a) => (a.failure.fallback = 'disk'))).toContain('$.failure.fallback: must be one of "memory", "none"');
    expect(problems((a) => (a.access.allow.tiers = ['everything']))).toContain('$.access.allow.tiers[0]: must be one of');
  });
});
