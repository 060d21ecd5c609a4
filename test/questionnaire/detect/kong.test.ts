import { describe, expect, test } from 'vitest';
import { detect } from '../../../src/questionnaire/detect/kong.js';
import { memoryProjectFs } from '../../../src/questionnaire/detect/memory-fs.js';
import { fixture, warnings } from './fixtures.js';

describe('Kong detector', () => {
  test('kong fixture: kong.conf proxies, gateway, redis policy, each rate limiting plugin with its scope', async () => {
    const w = warnings();
    const facts = await detect(fixture('kong'), w.warn);
    expect(w.list).toEqual([]);
    expect(facts).toEqual([
      {
        field: 'stack.trustedProxies',
        value: ['10.0.0.0/8', '192.168.0.0/16'],
        source: 'kong.conf',
        detail: 'trusted_ips = 10.0.0.0/8, 192.168.0.0/16',
      },
      { field: 'realIpHeader', value: 'X-Forwarded-For', source: 'kong.conf', detail: 'real_ip_header = X-Forwarded-For' },
      {
        field: 'stack.gateway',
        value: 'kong',
        source: 'kong.yml',
        detail: 'Kong declarative config (_format_version 3.0) with 3 rate limiting plugins',
      },
      {
        field: 'stack.store',
        value: 'redis',
        source: 'kong.yml',
        detail: 'rate-limiting plugin on service orders uses the redis policy',
      },
      {
        field: 'existingLimiters',
        source: 'kong.yml',
        value: {
          kind: 'kong:rate-limiting',
          scope: 'global',
          key: 'ip',
          limit: 50,
          windowSeconds: 1,
          rate: { requests: 50, per: 'second' },
          settings: { second: 50, limit_by: 'ip', policy: 'local' },
        },
        detail: 'rate-limiting plugin applied globally: 50 per second, by ip, policy local',
      },
      {
        field: 'existingLimiters',
        source: 'kong.yml',
        value: {
          kind: 'kong:rate-limiting',
          scope: 'service orders',
          key: 'consumer',
          limit: 60,
          windowSeconds: 60,
          rate: { requests: 60, per: 'minute' },
          settings: {
            minute: 60,
            hour: 1000,
            limit_by: 'consumer',
            policy: 'redis',
            fault_tolerant: true,
            'redis.host': 'redis',
            'redis.port': 6379,
          },
        },
        detail: 'rate-limiting plugin on service orders: 60 per minute, 1000 per hour, by consumer, policy redis',
      },
      {
        field: 'existingLimiters',
        source: 'kong.yml',
        value: {
          kind: 'kong:rate-limiting-advanced',
          scope: 'route login',
          key: 'ip',
          limit: 5,
          windowSeconds: 60,
          rate: { requests: 5, per: 'minute' },
          settings: { limit: [5, 20], window_size: [60, 3600], identifier: 'ip', strategy: 'local', window_type: 'sliding' },
        },
        detail: 'rate-limiting-advanced plugin on route login: 5 per minute, 20 per hour (sliding window), by ip, policy local',
      },
    ]);
  });

  test('JSON decK file with a top-level plugin naming its route, header limit_by, disabled plugin', async () => {
    const deck = {
      _format_version: '3.0',
      routes: [{ name: 'search', paths: ['/search'] }],
      plugins: [
        { name: 'rate-limiting', route: 'search', enabled: false, config: { hour: 500, limit_by: 'header', header_name: 'X-Tenant' } },
        { name: 'cors', config: {} },
      ],
    };
    const facts = await detect(memoryProjectFs({ 'gateway/deck.json': JSON.stringify(deck) }));
    expect(facts.map((f) => f.detail)).toEqual([
      'Kong declarative config (_format_version 3.0) with 1 rate limiting plugin',
      'rate-limiting plugin on route search: 500 per hour, by header X-Tenant, disabled',
    ]);
  });

  test('a broken kong.yml is a warning; YAML without _format_version is not Kong', async () => {
    const w = warnings();
    const facts = await detect(
      memoryProjectFs({ 'kong.yml': '_format_version: "3.0"\nservices: [\n', 'other.yaml': 'plugins: []\n' }),
      w.warn,
    );
    expect(facts).toEqual([]);
    expect(w.list).toHaveLength(1);
    expect(w.list[0]?.message).toMatch(/^looks like Kong declarative config but is not valid YAML/);
  });

  test('empty and nginx-only folders: nothing', async () => {
    expect(await detect(fixture('empty'))).toEqual([]);
    expect(await detect(fixture('nginx-only'))).toEqual([]);
  });
});
