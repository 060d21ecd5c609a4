import { describe, expect, test } from 'vitest';
import { memoryProjectFs } from '../../../src/questionnaire/detect/memory-fs.js';
import { detect, parseNginx } from '../../../src/questionnaire/detect/nginx.js';
import type { ExistingLimiter } from '../../../src/questionnaire/detect/types.js';
import { fixture, warnings } from './fixtures.js';

describe('nginx detector', () => {
  test('nginx-only: gateway, the limit_req joined with its zone, trusted proxies, real IP header', async () => {
    const w = warnings();
    const facts = await detect(fixture('nginx-only'), w.warn);
    expect(w.list).toEqual([]);
    expect(facts).toEqual([
      { field: 'stack.gateway', value: 'nginx', source: 'nginx.conf', detail: 'nginx config with limit_req_zone api' },
      {
        field: 'existingLimiters',
        source: 'nginx.conf',
        value: {
          kind: 'nginx',
          name: 'api',
          scope: 'location /api/',
          key: '$binary_remote_addr',
          limit: 10,
          windowSeconds: 1,
          rate: { requests: 10, per: 'second' },
          burst: 20,
          settings: { zone: 'api', zoneSize: '10m', rate: '10r/s', burst: 20, nodelay: true, status: '429' },
          line: 25,
        },
        detail:
          'limit_req_zone $binary_remote_addr zone=api:10m rate=10r/s; limit_req zone=api burst=20 nodelay in location /api/ = 10 per second, burst 20',
      },
      { field: 'stack.trustedProxies', value: ['10.0.0.0/8'], source: 'nginx.conf', detail: 'set_real_ip_from 10.0.0.0/8' },
      {
        field: 'nginxSetting',
        value: { name: 'limit_req_status', value: '429', context: 'http', line: 10 },
        source: 'nginx.conf',
        detail: 'limit_req_status 429 in http at line 10',
      },
      {
        field: 'nginxSetting',
        value: { name: 'set_real_ip_from', value: '10.0.0.0/8', context: 'http', line: 12 },
        source: 'nginx.conf',
        detail: 'set_real_ip_from 10.0.0.0/8 in http at line 12',
      },
      {
        field: 'nginxSetting',
        value: { name: 'real_ip_header', value: 'X-Forwarded-For', context: 'http', line: 13 },
        source: 'nginx.conf',
        detail: 'real_ip_header X-Forwarded-For in http at line 13',
      },
      {
        field: 'nginxSetting',
        value: { name: 'real_ip_recursive', value: 'on', context: 'http', line: 14 },
        source: 'nginx.conf',
        detail: 'real_ip_recursive on in http at line 14',
      },
      {
        field: 'realIpHeader',
        value: 'X-Forwarded-For',
        source: 'nginx.conf',
        detail: 'real_ip_header X-Forwarded-For; real_ip_recursive on',
      },
    ]);
  });

  test('zones defined in one file and used in another (conf.d), unused zones, invalid CIDRs', async () => {
    const facts = await detect(
      memoryProjectFs({
        'deploy/nginx.conf': [
          'http {',
          '  limit_req_zone $http_x_api_key zone=per_key:20m rate=600r/m;',
          '  limit_req_zone $binary_remote_addr zone=spare:1m rate=1r/s;',
          '  set_real_ip_from 172.16.0.0/12;',
          '  set_real_ip_from unix:;',
          '  set_real_ip_from 2001:db8::/32;',
          '  include conf.d/*.conf;',
          '}',
        ].join('\n'),
        'deploy/conf.d/api.conf': ['server {', '  server_name "api.example.com";', '  limit_req zone=per_key burst=50 delay=10;', '}'].join(
          '\n',
        ),
      }),
    );
    const limits = facts.filter((f) => f.field === 'existingLimiters');
    expect(limits.map((f) => [f.source, (f.value as ExistingLimiter).name, (f.value as ExistingLimiter).scope])).toEqual([
      ['deploy/conf.d/api.conf', 'per_key', 'server api.example.com'],
      ['deploy/nginx.conf', 'spare', 'unused (no limit_req refers to it)'],
    ]);
    expect(limits[0]?.value).toMatchObject({
      key: '$http_x_api_key',
      limit: 600,
      windowSeconds: 60,
      rate: { requests: 600, per: 'minute' },
      burst: 50,
      settings: { delay: '10' },
    });
    expect(limits[0]?.detail).toContain('(deploy/nginx.conf)');
    expect(facts.find((f) => f.field === 'stack.trustedProxies')).toEqual({
      field: 'stack.trustedProxies',
      value: ['172.16.0.0/12', '2001:db8::/32'],
      source: 'deploy/nginx.conf',
      detail: 'set_real_ip_from 172.16.0.0/12, 2001:db8::/32 (ignored: unix:)',
    });
  });

  test('other *.conf files (redis.conf, ntp.conf, supervisord) and nginx-named manifests are not nginx config', async () => {
    const facts = await detect(
      memoryProjectFs({
        'redis.conf': 'bind 127.0.0.1\nport 6379\nmaxmemory-policy noeviction\n',
        'etc/ntp.conf': 'server 0.pool.ntp.org iburst\nserver 1.pool.ntp.org iburst\n',
        'k8s/nginx-deployment.yaml': 'kind: Deployment\nmetadata: { name: nginx }\n',
        'supervisord.conf': '[program:api]\ncommand=node app.js\n',
      }),
    );
    expect(facts).toEqual([]);
  });

  test('a broken nginx.conf is a warning, and what parsed is still reported', async () => {
    const w = warnings();
    const facts = await detect(fixture('malformed'), w.warn);
    expect(w.list).toEqual([{ source: 'nginx.conf', message: 'nginx syntax: unclosed block at end of file; read what could be parsed' }]);
    expect(facts.map((f) => f.field)).toEqual(['stack.gateway', 'existingLimiters']);
    expect(facts[1]?.value).toMatchObject({ name: 'one', rate: { requests: 30, per: 'minute' } });
  });

  test('empty folder: nothing', async () => {
    expect(await detect(fixture('empty'))).toEqual([]);
  });

  test('parser: comments, quotes, ${var} and nesting', () => {
    const { directives, errors } = parseNginx(
      'http { # comment ; {\n  log_format main "a;b {c}";\n  location ~ ^/x/${id}$ { return 200; }\n}\n',
    );
    expect(errors).toEqual([]);
    expect(directives).toEqual([
      {
        name: 'http',
        args: [],
        line: 1,
        block: [
          { name: 'log_format', args: ['main', 'a;b {c}'], line: 2 },
          { name: 'location', args: ['~', '^/x/${id}$'], line: 3, block: [{ name: 'return', args: ['200'], line: 3 }] },
        ],
      },
    ]);
    expect(parseNginx('}\nserver {').errors).toEqual(['line 1: unexpected "}"', 'unclosed block at end of file']);
  });
});
