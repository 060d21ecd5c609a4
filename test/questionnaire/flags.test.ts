import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/messages.js';
import { optionKey, parseInitFlags } from '../../src/questionnaire/flags.js';
import { COMMAND_OPTIONS, INIT_OPTIONS } from '../../src/questionnaire/options.js';
import { QUESTIONS } from '../../src/questionnaire/questions.js';
import { STEPS } from '../../src/questionnaire/steps/index.js';

function badOption(raw: Parameters<typeof parseInitFlags>[0]): string {
  try {
    parseInitFlags(raw);
  } catch (e) {
    expect(e).toBeInstanceOf(UserError);
    expect((e as UserError).exitCode).toBe(2);
    return (e as UserError).message;
  }
  throw new Error('expected a UserError');
}

describe('init flags', () => {
  it('there is a flag for every question', () => {
    const names = INIT_OPTIONS.map((o) => /--([a-z-]+)/.exec(o.flags)?.[1]);
    for (const flag of [
      'format',
      'out',
      'code-dir',
      'goals',
      'language',
      'framework',
      'topology',
      'instances',
      'gateway',
      'store',
      'trusted-proxies',
      'identities',
      'endpoint',
      'typical-rps',
      'peak-rps',
      'capacity-rps',
      'burstiness',
      'clients',
      'tenants',
      'users',
      'plan',
      'quota-reset',
      'quota-time-zone',
      'quota-days',
      'exhaustion',
      'fail-mode',
      'outbound',
      'yes',
      'force',
      'answers-file',
    ]) {
      expect(names).toContain(flag);
    }
  });

  it('parses values with the same rules as the prompts', () => {
    const f = parseInitFlags({
      format: 'md',
      goals: 'overload, abuse',
      framework: 'nest',
      instances: '4',
      trustedProxies: '10.0.0.0/8,fd00::/8',
      identities: 'api-key,ip',
      peakRps: '1,200',
      plan: ['free:60/minute:10000', 'pro:600/minute'],
      quotaReset: 'month',
      quotaTimeZone: 'Europe/Berlin',
      failMode: 'auth=closed,read=open',
      outbound: ['stripe:100/second'],
      codeDir: 'none',
    });
    expect(f.format).toBe('markdown');
    expect(f.goals).toEqual(['overload', 'abuse']);
    expect(f.framework).toBe('nestjs');
    expect(f.instances).toBe(4);
    expect(f.trustedProxies).toEqual(['10.0.0.0/8', 'fd00::/8']);
    expect(f.peakRps).toBe(1200);
    expect(f.plans).toHaveLength(2);
    expect(f.quotaReset).toBe('calendar-month');
    expect(f.failure).toEqual({ auth: 'closed', read: 'open' });
    expect(f.codeDir).toBeNull();
    expect(parseInitFlags({ gateway: 'unknown', peakRps: 'unknown' })).toMatchObject({ gateway: 'unknown', peakRps: 'unknown' });
  });

  it('a bad value names the flag and says what is allowed (exit 2)', () => {
    expect(badOption({ format: 'pdf' })).toBe('Option --format: "pdf" is not one of html, markdown');
    expect(badOption({ trustedProxies: '10.0.0.0/33' })).toBe(
      'Option --trusted-proxies: "10.0.0.0/33" must be an IPv4 or IPv6 address or CIDR, e.g. 10.0.0.0/8 or fd00::/8',
    );
    expect(badOption({ quotaTimeZone: 'Mars/Olympus' })).toContain('must be an IANA time zone such as UTC');
    expect(badOption({ peakRps: 'lots' })).toBe('Option --peak-rps: "lots" is not a number: type digits only, e.g. 600');
    expect(badOption({ instances: '0' })).toContain('must be greater than 0');
    expect(badOption({ goals: 'speed' })).toContain('"speed" is not one of overload, abuse, fairness, quotas');
    expect(badOption({ endpoint: ['GET orders read'] })).toContain('must start with "/"');
    expect(badOption({ quotaReset: 'calendar-month', quotaDays: '30' })).toContain('only applies with --quota-reset rolling');
    expect(badOption({ topology: 'single', instances: '3' })).toContain('contradicts --topology single');
  });
});

describe('the question table and init options', () => {
  it('every question has a flag with help and an answers field some step fills; every init option is a question or the command own', () => {
    const fields = STEPS.flatMap((s) => s.fields);
    for (const q of QUESTIONS) {
      expect(q.flag, q.id).toMatch(/^--[a-z-]+ <[^>]+>$/);
      expect(q.help.length, q.id).toBeGreaterThan(10);
      expect(
        fields.some((f) => q.field === f || q.field.startsWith(`${f}.`)),
        q.field,
      ).toBe(true);
    }
    expect(new Set(QUESTIONS.map((q) => q.id)).size).toBe(QUESTIONS.length);
    expect(new Set(QUESTIONS.map((q) => q.flag)).size).toBe(QUESTIONS.length);
    const own = COMMAND_OPTIONS.map((o) => o.flags);
    for (const o of INIT_OPTIONS) expect(own.includes(o.flags) || QUESTIONS.some((q) => q.flag === o.flags), o.flags).toBe(true);
    expect(INIT_OPTIONS).toHaveLength(COMMAND_OPTIONS.length + QUESTIONS.length);
  });

  it('commander hands each question its own flag under the key the flags are read from', () => {
    const cmd = new Command().exitOverride();
    for (const o of INIT_OPTIONS) {
      if (o.repeatable) cmd.option(o.flags, o.description, (v: string, prev: string[] = []) => [...prev, v]);
      else cmd.option(o.flags, o.description);
    }
    cmd.parse(
      QUESTIONS.flatMap((q) => [q.flag.split(' ')[0] as string, 'x']),
      { from: 'user' },
    );
    const opts = cmd.opts();
    for (const q of QUESTIONS) expect(opts[optionKey(q)], q.flag).toEqual(q.repeatable ? ['x'] : 'x');
  });

  it('a bad choice names the flag and every allowed value; a flag that may stay open takes "unknown"', () => {
    for (const q of QUESTIONS.filter((q) => q.read.kind === 'choice')) {
      const allowed = (q.read as { allowed: readonly string[] }).allowed;
      expect(badOption({ [optionKey(q)]: 'nonsense' })).toBe(
        `Option ${q.flag.split(' ')[0]}: "nonsense" is not one of ${allowed.join(', ')}`,
      );
      if (q.unknown !== false) expect(parseInitFlags({ [optionKey(q)]: 'Unknown' })[q.id]).toBe('unknown');
    }
  });
});
