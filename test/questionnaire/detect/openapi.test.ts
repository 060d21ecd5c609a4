import { describe, expect, test } from 'vitest';
import { Endpoint } from '../../../src/answers/schema.js';
import { memoryProjectFs } from '../../../src/questionnaire/detect/memory-fs.js';
import { classifyRoute, detect, toRoute, withDetectedOpenApi } from '../../../src/questionnaire/detect/openapi.js';
import { factsToAnswers } from '../../../src/questionnaire/detect/to-answers.js';
import { fixture, warnings } from './fixtures.js';

describe('OpenAPI detector', () => {
  test('fastify-openapi: every operation, classified, with the server base path and bearer -> user', async () => {
    const w = warnings();
    const facts = await detect(fixture('fastify-openapi'), w.warn);
    expect(w.list).toEqual([]);
    expect(facts).toEqual([
      {
        field: 'endpoints',
        source: 'openapi.yaml',
        detail: 'OpenAPI 3.0.3 "Orders API": 14 operations (auth 4, search 1, export 1, expensive 1, health 1, read 2, write 3, webhook 1)',
        value: [
          { name: 'login', method: 'POST', route: '/v1/auth/login', class: 'auth', authKind: 'login', anonymous: true },
          { name: 'signup', method: 'POST', route: '/v1/auth/signup', class: 'auth', authKind: 'signup', anonymous: true },
          {
            name: 'resetPassword',
            method: 'POST',
            route: '/v1/auth/password/reset',
            class: 'auth',
            authKind: 'password-reset',
            anonymous: true,
          },
          {
            name: 'refreshToken',
            method: 'POST',
            route: '/v1/auth/token/refresh',
            class: 'auth',
            authKind: 'token',
            anonymous: true,
          },
          { name: 'searchOrders', method: 'GET', route: '/v1/search', class: 'search', anonymous: false },
          { name: 'exportOrders', method: 'GET', route: '/v1/orders/export', class: 'export', anonymous: false },
          { name: 'salesReport', method: 'GET', route: '/v1/reports/sales', class: 'expensive', anonymous: false },
          { name: 'health', method: 'GET', route: '/v1/healthz', class: 'health', anonymous: true },
          { name: 'listOrders', method: 'GET', route: '/v1/orders', class: 'read', anonymous: false },
          { name: 'createOrder', method: 'POST', route: '/v1/orders', class: 'write', anonymous: false },
          { name: 'getOrder', method: 'GET', route: '/v1/orders/:orderId', class: 'read', anonymous: false },
          { name: 'updateOrder', method: 'PUT', route: '/v1/orders/:orderId', class: 'write', anonymous: false },
          { name: 'deleteOrder', method: 'DELETE', route: '/v1/orders/:orderId', class: 'write', anonymous: false },
          {
            name: 'POST /v1/webhooks/payments',
            method: 'POST',
            route: '/v1/webhooks/payments',
            class: 'webhook',
            anonymous: true,
          },
        ],
      },
      {
        field: 'identities',
        value: ['user'],
        source: 'openapi.yaml',
        detail: 'security schemes: bearerAuth (http bearer) -> user',
      },
      { field: 'openapi', value: { path: 'openapi.yaml' }, source: 'openapi.yaml', detail: 'OpenAPI 3.0.3 "Orders API"' },
    ]);
    for (const e of facts[0]?.value as unknown[]) expect(Endpoint.safeParse(e).success).toBe(true);
  });

  test('Swagger 2 JSON under any name: basePath, apiKey -> api-key, oauth2 -> user, no global security = anonymous', async () => {
    const spec = {
      swagger: '2.0',
      info: { title: 'Legacy', version: '1' },
      basePath: '/api/',
      securityDefinitions: {
        key: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        oauth: { type: 'oauth2', flow: 'password', tokenUrl: '/oauth/token' },
      },
      paths: {
        '/oauth/token': { post: { operationId: 'token' } },
        '/users/{userId}/mfa/verify': { post: {} },
        '/accounts/{id}/bulk-update': { patch: { security: [{ key: [] }] } },
        '/ping': { get: {} },
      },
    };
    const facts = await detect(memoryProjectFs({ 'docs/api-v1.json': JSON.stringify(spec) }));
    expect(facts.map((f) => [f.field, f.source])).toEqual([
      ['endpoints', 'docs/api-v1.json'],
      ['identities', 'docs/api-v1.json'],
    ]);
    expect(facts[0]?.value).toEqual([
      { name: 'token', method: 'POST', route: '/api/oauth/token', class: 'auth', authKind: 'token', anonymous: true },
      {
        name: 'POST /api/users/:userId/mfa/verify',
        method: 'POST',
        route: '/api/users/:userId/mfa/verify',
        class: 'auth',
        authKind: 'mfa',
        anonymous: true,
      },
      {
        name: 'PATCH /api/accounts/:id/bulk-update',
        method: 'PATCH',
        route: '/api/accounts/:id/bulk-update',
        class: 'export',
        anonymous: false,
      },
      { name: 'GET /api/ping', method: 'GET', route: '/api/ping', class: 'health', anonymous: true },
    ]);
    expect(facts[1]).toMatchObject({
      value: ['api-key', 'user'],
      detail: 'security schemes: key (apiKey in header X-API-Key) -> api-key, oauth (oauth2) -> user',
    });
  });

  test('optional security ([{}]) is anonymous; a server URL with variables resolves their defaults', async () => {
    const yaml = [
      'openapi: 3.1.0',
      'info: { title: T, version: "1" }',
      'servers:',
      '  - url: "https://{host}/{base}"',
      '    variables: { host: { default: api.example.com }, base: { default: v2 } }',
      'security: [ { key: [] } ]',
      'paths:',
      '  /catalog:',
      '    get: { operationId: catalog, security: [ {} ] }',
      '  /me:',
      '    get: { operationId: me }',
      'components:',
      '  securitySchemes:',
      '    key: { type: apiKey, in: query, name: key }',
    ].join('\n');
    const facts = await detect(memoryProjectFs({ 'api/spec.yml': yaml }));
    expect(facts[0]?.value).toEqual([
      { name: 'catalog', method: 'GET', route: '/v2/catalog', class: 'read', anonymous: true },
      { name: 'me', method: 'GET', route: '/v2/me', class: 'read', anonymous: false },
    ]);
  });

  test('YAML that is not OpenAPI is left alone; a malformed openapi.yaml is a warning', async () => {
    const w = warnings();
    expect(await detect(memoryProjectFs({ 'docker-compose.yml': 'services:\n  api:\n    image: x\n' }), w.warn)).toEqual([]);
    expect(w.list).toEqual([]);
    expect(await detect(fixture('malformed'), w.warn)).toEqual([]);
    expect(w.list).toEqual([
      { source: 'openapi.yaml', message: expect.stringMatching(/^OpenAPI file is not valid YAML/) as unknown as string },
    ]);
  });

  test('an OpenAPI file without paths is a warning; empty and nginx-only folders give nothing', async () => {
    const w = warnings();
    expect(await detect(memoryProjectFs({ 'openapi.json': '{"openapi":"3.0.0","info":{}}' }), w.warn)).toEqual([]);
    expect(w.list).toEqual([{ source: 'openapi.json', message: 'OpenAPI document has no paths object' }]);
    expect(await detect(fixture('empty'))).toEqual([]);
    expect(await detect(fixture('nginx-only'))).toEqual([]);
  });

  test('names stay within 120 characters and unique', async () => {
    const long = `/${'a'.repeat(150)}`;
    const spec = {
      openapi: '3.0.0',
      paths: { [long]: { get: {}, post: {} }, '/x': { get: { operationId: 'dup' }, post: { operationId: 'dup' } } },
    };
    const facts = await detect(memoryProjectFs({ 'openapi.json': JSON.stringify(spec) }));
    const endpoints = facts[0]?.value as Array<{ name: string }>;
    expect(endpoints.every((e) => e.name.length >= 1 && e.name.length <= 120)).toBe(true);
    expect(new Set(endpoints.map((e) => e.name)).size).toBe(endpoints.length);
  });
});

describe('classifyRoute', () => {
  test.each([
    ['POST', '/login', 'auth', 'login'],
    ['POST', '/v1/auth/sign-in', 'auth', 'login'],
    ['POST', '/sessions', 'auth', 'login'],
    ['POST', '/users/register', 'auth', 'signup'],
    ['POST', '/auth/sign_up', 'auth', 'signup'],
    ['POST', '/password/forgot', 'auth', 'password-reset'],
    ['POST', '/auth/reset-password', 'auth', 'password-reset'],
    ['POST', '/oauth2/token', 'auth', 'token'],
    ['GET', '/oauth/authorize', 'auth', 'token'],
    ['POST', '/api-tokens', 'auth', 'token'],
    ['POST', '/auth/2fa/verify', 'auth', 'mfa'],
    ['POST', '/otp/send', 'auth', 'mfa'],
    ['POST', '/auth/verify-email', 'auth', 'other'],
    ['POST', '/auth/logout', 'write', undefined],
    ['GET', '/users/:id/login-history', 'read', undefined],
    ['POST', '/cache/refresh', 'write', undefined],
    ['GET', '/search', 'search', undefined],
    ['GET', '/products/autocomplete', 'search', undefined],
    ['GET', '/orders/export', 'export', undefined],
    ['GET', '/files/{id}/download', 'export', undefined],
    ['POST', '/orders/bulk', 'export', undefined],
    ['GET', '/reports/monthly', 'expensive', undefined],
    ['GET', '/analytics/events', 'expensive', undefined],
    ['POST', '/webhooks/stripe', 'webhook', undefined],
    ['POST', '/webhooks/register', 'webhook', undefined],
    ['GET', '/healthz', 'health', undefined],
    ['GET', '/v1/health', 'health', undefined],
    ['GET', '/readyz', 'health', undefined],
    ['GET', '/livez', 'health', undefined],
    ['GET', '/metrics', 'health', undefined],
    ['GET', '/orders/:id', 'read', undefined],
    ['HEAD', '/orders', 'read', undefined],
    ['DELETE', '/orders/:id', 'write', undefined],
  ])('%s %s -> %s %s', (method, route, cls, authKind) => {
    expect(classifyRoute(method, route)).toEqual(authKind ? { class: cls, authKind } : { class: cls });
  });

  test('a document split across files: the paths and components its $refs name are read too, the entry file once', async () => {
    const w = warnings();
    const files = memoryProjectFs({
      'api/openapi.yaml': [
        'openapi: 3.1.0',
        'info: { title: Split, version: "1" }',
        'paths:',
        '  /login: { $ref: "paths/auth.yaml#/login" }',
        '  /orders/{id}: { $ref: "paths/orders.yaml#/order" }',
        'components:',
        '  securitySchemes: { $ref: "../shared/components.yaml#/securitySchemes" }',
      ].join('\n'),
      'api/paths/auth.yaml':
        'login:\n  post: { operationId: login, responses: { "200": { $ref: "../../shared/components.yaml#/responses/Ok" } } }\n',
      'api/paths/orders.yaml': 'order:\n  get: { operationId: getOrder, responses: { "200": { description: ok } } }\n',
      'shared/components.yaml':
        'securitySchemes:\n  key: { type: apiKey, in: header, name: X-Api-Key }\nresponses:\n  Ok: { description: ok }\n',
    });
    const reads: string[] = [];
    const fs: typeof files = { list: (dir) => files.list(dir), read: (path, options) => (reads.push(path), files.read(path, options)) };
    const facts = await detect(fs, w.warn);
    expect(w.list).toEqual([]);
    // the detector's own pass reads every YAML file; the bundling reads the entry's parts, not the entry again
    expect(reads.filter((p) => p === 'api/openapi.yaml')).toHaveLength(1);
    const byField = Object.fromEntries(facts.map((f) => [f.field, f]));
    expect(byField.endpoints?.value).toEqual([
      { name: 'login', method: 'POST', route: '/login', class: 'auth', authKind: 'login', anonymous: true },
      { name: 'getOrder', method: 'GET', route: '/orders/:id', class: 'read', anonymous: true },
    ]);
    expect(byField.identities?.value).toEqual(['api-key']);
    expect(byField.openapi).toEqual({
      field: 'openapi',
      value: { path: 'api/openapi.yaml' },
      source: 'api/openapi.yaml',
      detail: 'OpenAPI 3.1.0 "Split", with 3 referenced files',
    });
    expect(factsToAnswers(facts).openapi).toEqual({ path: 'api/openapi.yaml' });
  });

  test('a $ref to a URL or out of the project is not followed: a warning, and the document is read without it', async () => {
    for (const ref of ['https://example.com/paths.yaml', '../../outside.yaml']) {
      const w = warnings();
      const fs = memoryProjectFs({
        'openapi.yaml': `openapi: 3.0.3\ninfo: { title: T, version: "1" }\npaths:\n  /a: { get: { operationId: a } }\n  /b: { $ref: "${ref}" }\n`,
      });
      const facts = await detect(fs, w.warn);
      expect(w.list).toEqual([
        { source: 'openapi.yaml', message: expect.stringMatching(/a \$ref could not be resolved.*never URLs/) as unknown as string },
      ]);
      expect(facts.find((f) => f.field === 'endpoints')?.value).toEqual([
        { name: 'a', method: 'GET', route: '/a', class: 'read', anonymous: true },
      ]);
    }
  });

  test("the detected document goes into the answers relative to the answers file's folder", async () => {
    const facts = await detect(
      memoryProjectFs({ 'api/openapi.yaml': 'openapi: 3.0.3\ninfo: { title: T, version: "1" }\npaths:\n  /a: { get: {} }\n' }),
    );
    expect(withDetectedOpenApi({}, facts, '/p', '/p/rate-limit.answers.json')).toEqual({ openapi: { path: 'api/openapi.yaml' } });
    expect(withDetectedOpenApi({}, facts, '/p', '/p/config/rl.answers.json')).toEqual({ openapi: { path: '../api/openapi.yaml' } });
    // one the answers name already is kept
    expect(withDetectedOpenApi({ openapi: { path: 'mine.yaml' } }, facts, '/p', '/p/rl.answers.json')).toEqual({
      openapi: { path: 'mine.yaml' },
    });
    // Swagger 2.0 is read for endpoints, but no overlay is written for it
    const swagger = await detect(memoryProjectFs({ 'swagger.json': '{"swagger":"2.0","paths":{"/a":{"get":{}}}}' }));
    expect(swagger.some((f) => f.field === 'openapi')).toBe(false);
  });

  test('toRoute converts {param} to :param', () => {
    expect(toRoute('/orders/{orderId}/items/{item-id}')).toBe('/orders/:orderId/items/:item-id');
    expect(toRoute('orders')).toBe('/orders');
  });
});
