import { describe, expect, test } from 'vitest';
import { detect } from '../../../src/questionnaire/detect/envoy.js';
import { memoryProjectFs } from '../../../src/questionnaire/detect/memory-fs.js';
import { fixture, warnings } from './fixtures.js';

describe('Envoy detector', () => {
  test('envoy fixture: gateway, per-route and filter token buckets, the global filter, the ratelimit service', async () => {
    const w = warnings();
    const facts = await detect(fixture('envoy'), w.warn);
    expect(w.list).toEqual([]);
    expect(facts).toEqual([
      {
        field: 'stack.gateway',
        value: 'envoy',
        source: 'envoy.yaml',
        detail: 'Envoy config with local_ratelimit, ratelimit (global)',
      },
      {
        field: 'existingLimiters',
        source: 'envoy.yaml',
        value: {
          kind: 'envoy-local',
          name: 'login_rate_limiter',
          scope: 'route /api/login',
          limit: 5,
          windowSeconds: 60,
          rate: { requests: 5, per: 'minute' },
          burst: 5,
          settings: {
            stat_prefix: 'login_rate_limiter',
            max_tokens: 5,
            tokens_per_fill: 5,
            fill_interval: '60s',
            filter_enabled_percent: 100,
            filter_enforced_percent: 100,
          },
        },
        detail: 'local_ratelimit token_bucket max_tokens=5 tokens_per_fill=5 fill_interval=60s on route /api/login = 5 per minute',
      },
      {
        field: 'existingLimiters',
        source: 'envoy.yaml',
        value: {
          kind: 'envoy-local',
          name: 'http_local_rate_limiter',
          scope: 'all routes',
          limit: 10,
          windowSeconds: 1,
          rate: { requests: 10, per: 'second' },
          burst: 100,
          settings: {
            stat_prefix: 'http_local_rate_limiter',
            max_tokens: 100,
            tokens_per_fill: 10,
            fill_interval: '1s',
            filter_enabled_percent: 100,
            filter_enforced_percent: 100,
          },
        },
        detail: 'local_ratelimit token_bucket max_tokens=100 tokens_per_fill=10 fill_interval=1s on all routes = 10 per second',
      },
      {
        field: 'existingLimiters',
        source: 'envoy.yaml',
        value: {
          kind: 'envoy-global',
          name: 'api',
          scope: 'routes with rate_limits actions',
          key: 'remote_address',
          settings: {
            domain: 'api',
            failure_mode_deny: false,
            timeout: '0.05s',
            rate_limit_service: 'ratelimit',
            actions: ['remote_address'],
          },
        },
        detail: 'ratelimit filter, domain api, fails open, service cluster ratelimit, descriptors from remote_address',
      },
      {
        field: 'stack.gateway',
        value: 'envoy',
        source: 'ratelimit/config.yaml',
        detail: 'envoyproxy/ratelimit service config for domain api',
      },
      {
        field: 'existingLimiters',
        source: 'ratelimit/config.yaml',
        value: {
          kind: 'envoy-ratelimit-service',
          name: 'api',
          key: 'remote_address',
          limit: 600,
          windowSeconds: 60,
          rate: { requests: 600, per: 'minute' },
          settings: { domain: 'api', requests_per_unit: 600, unit: 'minute' },
        },
        detail: 'ratelimit service domain api, descriptor remote_address: 600 per minute',
      },
    ]);
  });

  test('a filter with no filter_enforced is reported as not enforced; descriptors carry their key', async () => {
    const yaml = [
      'http_filters:',
      '  - name: envoy.filters.http.local_ratelimit',
      '    typed_config:',
      '      "@type": type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit',
      '      stat_prefix: shadow',
      '      token_bucket: { max_tokens: 20, tokens_per_fill: 1, fill_interval: 0.5s }',
      '      descriptors:',
      '        - entries: [ { key: client_id, value: foo } ]',
      '          token_bucket: { max_tokens: 3, tokens_per_fill: 3, fill_interval: { seconds: 3600 } }',
    ].join('\n');
    const facts = await detect(memoryProjectFs({ 'k8s/envoy-filter.yaml': yaml }));
    expect(facts.map((f) => f.detail)).toEqual([
      'Envoy config with local_ratelimit',
      'local_ratelimit token_bucket max_tokens=20 tokens_per_fill=1 fill_interval=0.5s on all routes = 1 per 500 ms; not enforced (filter_enforced unset or 0%)',
      'local_ratelimit token_bucket max_tokens=3 tokens_per_fill=3 fill_interval=3600s on descriptor client_id=foo, all routes = 3 per hour',
    ]);
    expect(facts[1]?.value).toMatchObject({ rate: { requests: 2, per: 'second' }, burst: 20 });
    expect(facts[2]?.value).toMatchObject({ key: 'client_id=foo', rate: { requests: 3, per: 'hour' } });
  });

  test('YAML that merely mentions envoy but does not parse is a warning; unrelated YAML is ignored', async () => {
    const w = warnings();
    const facts = await detect(
      memoryProjectFs({
        'envoy.yaml': 'static_resources:\n  listeners: [\n',
        'ci.yml': 'jobs:\n  test: { runs-on: ubuntu-latest }\n',
      }),
      w.warn,
    );
    expect(facts).toEqual([]);
    expect(w.list).toHaveLength(1);
    expect(w.list[0]).toMatchObject({ source: 'envoy.yaml' });
    expect(w.list[0]?.message).toMatch(/^looks like Envoy configuration but is not valid YAML/);
  });

  test('empty and other fixtures: nothing', async () => {
    expect(await detect(fixture('empty'))).toEqual([]);
    expect(await detect(fixture('kong'))).toEqual([]);
    expect(await detect(fixture('fastify-openapi'))).toEqual([]);
  });
});
