import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAnswers } from '../../src/answers/load.js';
import { Answers } from '../../src/answers/schema.js';
import { schemaText } from '../../src/commands/schema.js';
import { UserError } from '../../src/messages.js';
import { exampleNames, EXAMPLES, ROOT } from '../helpers/examples.js';

describe('answers schema', () => {
  it('the checked-in JSON Schema is generated from the zod schema (run `npm run schema:write` when this fails)', () => {
    const checkedIn = readFileSync(path.join(ROOT, 'schemas/answers.schema.json'), 'utf8');
    expect(checkedIn).toBe(schemaText());
  });

  it('the JSON Schema describes every top-level answers field', () => {
    const schema = JSON.parse(schemaText()) as { properties: Record<string, unknown> };
    expect(Object.keys(schema.properties).sort()).toEqual(Object.keys(Answers.shape).sort());
  });

  it.each(exampleNames())('example %s is valid', (name) => {
    const text = readFileSync(path.join(EXAMPLES, `${name}.answers.json`), 'utf8');
    expect(() => parseAnswers(text, name)).not.toThrow();
  });

  it('reports malformed JSON with the parser position', () => {
    expect(() => parseAnswers('{"goals": [', 'a.json')).toThrow(/not valid JSON/);
  });

  it('reports every problem with its JSON path and what is allowed', () => {
    const bad = {
      goals: ['overload', 'speed'],
      stack: { topology: 'cluster', trustedProxies: ['10.0.0.0/33'] },
      endpoints: [{ name: 'x', route: 'no-slash', class: 'read' }],
      quotas: { reset: { kind: 'calendar', period: 'month', timeZone: 'Mars/Olympus' } },
      plans: [{ name: 'Free', rate: { requests: -1, per: 'minute' } }],
      colour: 'blue',
    };
    let err: unknown;
    try {
      parseAnswers(JSON.stringify(bad), 'bad.json');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UserError);
    const msg = (err as UserError).message;
    expect((err as UserError).exitCode).toBe(2);
    expect(msg).toContain('$.goals[1]: must be one of "overload", "abuse", "fairness", "quotas"');
    expect(msg).toContain('$.stack.topology: must be one of "single", "horizontal"');
    expect(msg).toContain('$.stack.trustedProxies[0]: must be an IPv4 or IPv6 address or CIDR');
    expect(msg).toContain('$.endpoints[0].route: must start with "/"');
    expect(msg).toContain('$.quotas.reset.timeZone: must be an IANA time zone');
    expect(msg).toContain('$.plans[0].rate.requests: must be at least 0.001');
    expect(msg).toContain('unknown field(s) "colour"');
  });
});

describe('answers type errors', () => {
  it('says "must be a number" for a value of the wrong type, not "is required"', () => {
    expect(() => parseAnswers('{"traffic":{"peakRps":"x"}}', 'a.json')).toThrow('$.traffic.peakRps: must be a number');
    expect(() => parseAnswers('{"traffic":{}, "plans": [{"name": "Free"}]}', 'a.json')).toThrow('$.plans[0].rate: is required (an object)');
  });
});

describe('answers the scripts and configs could not use are refused with the field named', () => {
  const problems = (answers: unknown): string => {
    try {
      parseAnswers(JSON.stringify(answers), 'a.json');
    } catch (e) {
      expect((e as UserError).exitCode).toBe(2);
      return (e as UserError).message;
    }
    return '';
  };

  it('rates the scripts cannot count: 1e308 and 5e-324 per minute', () => {
    expect(problems({ plans: [{ name: 'Huge', rate: { requests: 1e308, per: 'minute' } }] })).toContain(
      '$.plans[0].rate.requests: must be at most 1,000,000,000',
    );
    expect(problems({ plans: [{ name: 'Tiny', rate: { requests: 5e-324, per: 'minute' } }] })).toContain(
      '$.plans[0].rate.requests: must be at least 0.001',
    );
    expect(problems({ traffic: { peakRps: 1e308 } })).toContain('$.traffic.peakRps: must be at most 1,000,000,000');
    expect(problems({ plans: [{ name: 'Ok', rate: { requests: 0.5, per: 'minute' } }] })).toBe('');
  });

  it('addresses and ranges are parsed, IPv4 and IPv6: malformed ones are refused', () => {
    for (const bad of [
      '1:::2',
      '1::2::3',
      '10.0.0.256/8',
      '10.0.0.0/33',
      'fd00::/129',
      '01.2.3.4',
      '1:2:3:4:5:6:7:8:9',
      'g::1',
      '::ffff:1.2.3',
    ]) {
      expect(problems({ stack: { trustedProxies: [bad] } }), bad).toContain(
        '$.stack.trustedProxies[0]: must be an IPv4 or IPv6 address or CIDR',
      );
    }
    for (const good of ['10.0.0.0/8', '127.0.0.1', '::1', 'fd00::/8', '2400:cb00::/32', '::ffff:10.0.0.1/128', '1:2:3:4:5:6:7:8']) {
      expect(problems({ stack: { trustedProxies: [good] } }), good).toBe('');
    }
  });

  it('a catch-all trusted proxy range is refused: every client could name its own IP', () => {
    expect(problems({ stack: { trustedProxies: ['0.0.0.0/0'] } })).toContain('$.stack.trustedProxies[0]: must not trust every address');
    expect(problems({ stack: { trustedProxies: ['::/0'] } })).toContain('$.stack.trustedProxies[0]: must not trust every address');
  });

  it('the documentation link is http or https only', () => {
    expect(problems({ headers: { docsUrl: 'javascript:alert(1)' } })).toContain('$.headers.docsUrl: must be an http:// or https:// URL');
    expect(problems({ headers: { docsUrl: 'data:text/html,x' } })).toContain('$.headers.docsUrl: must be an http:// or https:// URL');
    expect(problems({ headers: { docsUrl: 'https://api.example.com/docs' } })).toBe('');
  });

  it("the API's OpenAPI document is a .yaml, .yml or .json file", () => {
    expect(problems({ openapi: { path: 'api/openapi.yaml' } })).toBe('');
    expect(problems({ openapi: { path: '/etc/passwd' } })).toContain('$.openapi.path: must name a .yaml, .yml or .json file');
    expect(problems({ openapi: { path: '' } })).toContain('$.openapi.path: must not be empty');
    expect(problems({ openapi: { path: 'a.yaml', url: 'x' } })).toContain('$.openapi: has unknown field(s) "url"');
  });

  it('a plan bucket that would take more than 10 years to refill is refused (its key lifetime)', () => {
    expect(problems({ plans: [{ name: 'Slow', rate: { requests: 0.001, per: 'day' }, burst: 1000000 }] })).toContain(
      '$.plans[0].burst: takes longer than 10 years to refill',
    );
  });

  it('an overage cap must be above the quota it caps', () => {
    expect(
      problems({ plans: [{ name: 'Pro', rate: { requests: 1, per: 'second' }, quota: 100, exhaustion: 'soft-warning', overageCap: 90 }] }),
    ).toContain('$.plans[0].overageCap: must be greater than the quota');
  });

  it('existing limiters: a route must start with "/" and a window must be given', () => {
    const msg = problems({ existing: { limiters: [{ kind: 'nginx', path: 'api', limit: 5 }] } });
    expect(msg).toContain('$.existing.limiters[0].path: must start with "/"');
    expect(msg).toContain('$.existing.limiters[0].windowSeconds');
  });

  it('existing limiters: how one counts is one of the known ways, named in the message', () => {
    const msg = problems({ existing: { limiters: [{ kind: 'nginx', limit: 5, windowSeconds: 1, algorithm: 'gcra' }] } });
    expect(msg).toContain(
      '$.existing.limiters[0].algorithm: must be one of "fixed-window", "sliding-window", "token-bucket", "leaky-bucket", "unknown"',
    );
  });

  it("a rule's key may not hold '~', the mark of a caller counted by another identity", () => {
    expect(problems({ rules: [{ id: 'x', key: 'rl:{u~ak:<api-key-id>}:req' }] })).toContain("$.rules[0].key: must not contain '~'");
  });
});
