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
    expect(() => parseAnswers('{"traffic":{}, "plans": [{"name": "Free"}]}', 'a.json')).toThrow('$.plans[0].rate: is required (object)');
  });
});
