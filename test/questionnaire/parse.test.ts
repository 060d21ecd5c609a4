import { describe, expect, it } from 'vitest';
import { Traffic } from '../../src/answers/schema.js';
import {
  parseCidrList,
  parseEndpointSpec,
  parseFailModes,
  parseNumber,
  parseOutboundSpec,
  parsePlanSpec,
  parseRate,
  parseRollingDays,
  parseRoute,
  parseTimeZone,
  validatorOf,
} from '../../src/questionnaire/parse.js';

const msg = (r: { ok: boolean; message?: string }) => (r.ok ? 'ok' : (r as { message: string }).message);

describe('parsing what people type (shared by prompts and flags)', () => {
  it('numbers: digits only, checked by the schema field, with an example in the message', () => {
    expect(parseNumber('600', Traffic.shape.peakRps, '600')).toEqual({ ok: true, value: 600 });
    expect(parseNumber('1,500', Traffic.shape.peakRps, '600')).toEqual({ ok: true, value: 1500 });
    expect(parseNumber('2.5', Traffic.shape.peakRps, '600')).toEqual({ ok: true, value: 2.5 });
    expect(msg(parseNumber('lots', Traffic.shape.peakRps, '600'))).toBe('"lots" is not a number: type digits only, e.g. 600');
    expect(msg(parseNumber('0', Traffic.shape.peakRps, '600'))).toBe('0 must be greater than 0, e.g. 600');
    expect(msg(parseNumber('-3', Traffic.shape.peakRps, '600'))).toBe('-3 must be greater than 0, e.g. 600');
    expect(msg(parseNumber('2.5', Traffic.shape.distinctClients, '2000'))).toBe('2.5 must be a whole number, e.g. 2000');
  });

  it('CIDRs reuse the schema rule and say what is allowed', () => {
    expect(parseCidrList('10.0.0.0/8, 192.168.0.0/16 fd00::/8')).toEqual({ ok: true, value: ['10.0.0.0/8', '192.168.0.0/16', 'fd00::/8'] });
    expect(msg(parseCidrList('10.0.0.0/33'))).toBe('"10.0.0.0/33" must be an IPv4 or IPv6 address or CIDR, e.g. 10.0.0.0/8 or fd00::/8');
    expect(msg(parseCidrList('10.0.0.0/8, office'))).toContain('"office" must be an IPv4 or IPv6 address or CIDR');
    expect(parseCidrList('').ok).toBe(false);
  });

  it('routes and IANA time zones reuse the schema rules', () => {
    expect(parseRoute('/v1/orders/:id')).toEqual({ ok: true, value: '/v1/orders/:id' });
    expect(msg(parseRoute('orders'))).toBe('"orders" must start with "/", e.g. /v1/orders/:id');
    expect(parseTimeZone('Europe/Berlin')).toEqual({ ok: true, value: 'Europe/Berlin' });
    expect(msg(parseTimeZone('Mars/Olympus'))).toBe(
      '"Mars/Olympus" must be an IANA time zone such as UTC, Europe/Berlin or America/New_York',
    );
  });

  it('rates: count per named period', () => {
    expect(parseRate('600/minute')).toEqual({ ok: true, value: { requests: 600, per: 'minute' } });
    expect(parseRate('10 per second')).toEqual({ ok: true, value: { requests: 10, per: 'second' } });
    expect(parseRate('5/h')).toEqual({ ok: true, value: { requests: 5, per: 'hour' } });
    expect(msg(parseRate('60 per fortnight'))).toBe('"fortnight" is not a period: use second, minute, hour or day');
    expect(msg(parseRate('fast'))).toContain('is not a rate: write a count per period, e.g. 600/minute');
    expect(msg(parseRate('0/minute'))).toContain('must be at least 0.001');
    expect(msg(parseRate('2000000000/minute'))).toContain('must be at most 1,000,000,000');
  });

  it('rolling quota windows are 1-366 days', () => {
    expect(parseRollingDays('30')).toEqual({ ok: true, value: 30 });
    expect(msg(parseRollingDays('400'))).toBe('400 must be at most 366, e.g. 30');
    expect(msg(parseRollingDays('1.5'))).toContain('whole number');
  });

  it('endpoint, plan, outbound and fail-mode flag specs', () => {
    expect(parseEndpointSpec('login=POST /v1/login auth')).toEqual({
      ok: true,
      value: { name: 'login', method: 'POST', route: '/v1/login', class: 'auth', anonymous: true },
    });
    expect(parseEndpointSpec('get /v1/search search anonymous')).toEqual({
      ok: true,
      value: { name: 'GET /v1/search', method: 'GET', route: '/v1/search', class: 'search', anonymous: true },
    });
    expect(msg(parseEndpointSpec('FETCH /x read'))).toContain('method "FETCH" is not one of GET, POST');
    expect(msg(parseEndpointSpec('GET x read'))).toContain('must start with "/"');
    expect(msg(parseEndpointSpec('GET /x slow'))).toContain('endpoint class "slow" is not one of auth, read');
    expect(parsePlanSpec('free:60/minute:10000')).toEqual({
      ok: true,
      value: { name: 'free', rate: { requests: 60, per: 'minute' }, quota: 10000 },
    });
    expect(parsePlanSpec('pro:600/minute')).toEqual({ ok: true, value: { name: 'pro', rate: { requests: 600, per: 'minute' } } });
    expect(msg(parsePlanSpec('free'))).toContain('should be NAME:RATE[:QUOTA]');
    expect(msg(parsePlanSpec('free:60/minute:many'))).toContain('quota "many" is not a number');
    expect(parseOutboundSpec('stripe:100/second')).toEqual({
      ok: true,
      value: { name: 'stripe', limit: { requests: 100, per: 'second' } },
    });
    expect(parseFailModes('auth=closed, read=open')).toEqual({ ok: true, value: { auth: 'closed', read: 'open' } });
    expect(msg(parseFailModes('auth=maybe'))).toContain('fail mode "maybe" is not one of open, closed');
  });

  it('validatorOf: true, or the message; empty allowed only when asked', () => {
    const v = validatorOf(parseRoute, true);
    expect(v('')).toBe(true);
    expect(v('/x')).toBe(true);
    expect(v('x')).toContain('must start with "/"');
    expect(validatorOf(parseRoute)('')).not.toBe(true);
  });
});
