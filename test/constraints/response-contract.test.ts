import responseContract from '../../src/constraints/response-contract.js';
import { apiGatewayTemplateJson } from '../../src/escape/index.js';
import type { HeaderSpec } from '../../src/design/model.js';
import { forceField, getRule, mutate, validDesign } from '../fixtures/design.js';
import { awsKeys, edit, editJson, keyless, main, saas, without } from './broken-files.js';
import { runConstraintTests } from './tester.js';

const design = validDesign();

function headers(...names: string[]): HeaderSpec[] {
  return names.map((name) => ({ name, example: '1', meaning: 'test' }));
}

const SILENT = ['auth-login-per-username', 'auth-login-per-ip'];

runConstraintTests(responseContract, {
  valid: [
    { name: 'the reference design (IETF structured fields)', design },
    {
      name: 'the IETF trio, with Retry-After and RateLimit-Policy listed beside it',
      design: mutate(design, (d) => {
        d.contract.convention = 'ietf-trio';
        d.contract.headers = headers('RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'RateLimit-Policy', 'Retry-After');
      }),
    },
    {
      name: 'the X-RateLimit convention, in any letter case, with an extra X-RateLimit header',
      design: mutate(design, (d) => {
        d.contract.convention = 'x-ratelimit';
        d.contract.headers = headers('x-ratelimit-limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'X-RateLimit-Used');
      }),
    },
    {
      name: 'the IETF trio with its documented quota trio beside it',
      design: mutate(design, (d) => {
        d.contract.convention = 'ietf-trio';
        d.contract.headers = headers('RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset');
        d.contract.quotaHeaders = headers('RateLimit-Quota-Limit', 'RateLimit-Quota-Remaining', 'RateLimit-Quota-Reset', 'Quota-Exceeded');
      }),
    },
    {
      name: 'an outbound rule answers no client, whatever its header policy',
      design: mutate(design, (d) => {
        getRule(d, 'outbound-payments').headers = 'full';
      }),
    },
  ],
  invalid: [
    {
      name: 'Retry-After not on every 429',
      design: mutate(design, (d) => {
        d.contract.retryAfter.onEvery429 = false;
      }),
      expect: [{ messageId: 'retryAfterMissing' }],
    },
    {
      name: 'IETF headers and X-RateLimit headers both emitted',
      design: mutate(design, (d) => {
        d.contract.headers = headers('RateLimit', 'RateLimit-Policy', 'X-RateLimit-Remaining');
      }),
      expect: [{ messageId: 'mixedConventions', data: { header: 'X-RateLimit-Remaining', convention: 'ietf-structured' } }],
    },
    {
      name: 'the trio declared but structured fields listed',
      design: mutate(design, (d) => {
        d.contract.convention = 'ietf-trio';
      }),
      expect: [
        { messageId: 'missingHeader', data: { header: 'RateLimit-Limit' } },
        { messageId: 'missingHeader', data: { header: 'RateLimit-Remaining' } },
        { messageId: 'missingHeader', data: { header: 'RateLimit-Reset' } },
        { messageId: 'mixedConventions', data: { header: 'RateLimit' } },
      ],
    },
    {
      name: 'no convention and no headers',
      design: mutate(design, (d) => {
        forceField(d.contract, 'convention', undefined);
        d.contract.headers = [];
      }),
      expect: [{ messageId: 'noConvention', data: { value: 'none' } }, { messageId: 'noHeaders' }],
    },
    {
      name: 'a login limit that counts down for the attacker',
      design: mutate(design, (d) => {
        getRule(d, 'auth-login-per-ip').headers = 'full';
        d.contract.silentRuleIds = ['auth-login-per-username'];
      }),
      expect: [
        { messageId: 'securityNotSilent', ruleId: 'auth-login-per-ip', data: { headers: 'full' } },
        { messageId: 'securityNotListed', ruleId: 'auth-login-per-ip' },
      ],
    },
    {
      name: 'a silent security rule missing from the contract list',
      design: mutate(design, (d) => {
        d.contract.silentRuleIds = ['auth-login-per-ip'];
      }),
      expect: [{ messageId: 'securityNotListed', ruleId: 'auth-login-per-username' }],
    },
    {
      name: 'a hand-written rule on an auth endpoint is a security rule whatever its tier',
      design: mutate(design, (d) => {
        d.rules.push({ ...getRule(d, 'auth-login-per-ip'), id: 'login-extra', tier: 'fairness', headers: 'full' });
      }),
      expect: [
        { messageId: 'securityNotSilent', ruleId: 'login-extra' },
        { messageId: 'securityNotListed', ruleId: 'login-extra' },
      ],
    },
    {
      name: 'quota headers of another convention',
      design: mutate(design, (d) => {
        d.contract.quotaHeaders = headers('X-RateLimit-Quota-Remaining', 'Quota-Exceeded');
      }),
      expect: [{ messageId: 'mixedConventions', data: { header: 'X-RateLimit-Quota-Remaining', convention: 'ietf-structured' } }],
    },
    {
      name: 'an edge-only rule that claims the full headers nginx never sends',
      design: mutate(design, (d) => {
        getRule(d, 'global-ceiling').headers = 'full';
      }),
      expect: [{ messageId: 'edgeClaimsHeaders', ruleId: 'global-ceiling', data: { headers: 'full' } }],
    },
    {
      name: 'an edge-only rule missing from the contract list of edge rules',
      design: mutate(design, (d) => {
        d.contract.edgeRuleIds = [];
      }),
      expect: [{ messageId: 'edgeNotListed', ruleId: 'global-ceiling' }],
    },
    {
      name: 'a middleware rule can not hide behind the edge marking',
      design: mutate(design, (d) => {
        getRule(d, 'api-per-api-key').headers = 'edge';
        d.contract.edgeRuleIds = ['global-ceiling', 'api-per-api-key'];
      }),
      expect: [{ messageId: 'headersNotFull', ruleId: 'api-per-api-key', data: { headers: 'edge' } }],
    },
    {
      name: 'business limits that hide their headers',
      design: mutate(design, (d) => {
        getRule(d, 'api-per-api-key').headers = 'silent';
        getRule(d, 'quota-free-monthly').headers = 'none';
        d.contract.silentRuleIds = [...SILENT, 'api-per-api-key'];
      }),
      expect: [
        { messageId: 'headersNotFull', ruleId: 'api-per-api-key', data: { headers: 'silent' } },
        { messageId: 'unexpectedSilent', ruleId: 'api-per-api-key' },
        { messageId: 'headersNotFull', ruleId: 'quota-free-monthly', data: { headers: 'none' } },
      ],
    },
  ],
});

// What ships: the generated files checked against the design, and broken one at a time.
runConstraintTests(responseContract, {
  valid: [
    { name: 'the files generated for saas-platform', ...saas() },
    { name: 'the files generated for a Koa API', ...main('koa') },
    { name: 'the files generated for another framework', ...main('other') },
    ...(['nginx', 'envoy', 'kong', 'aws-api-gateway', 'cloudflare'] as const).map((g) => ({
      name: `the ${g} files generated for the keyless census API (every edge 429 body as the contract shows it)`,
      ...keyless(g),
    })),
    { name: 'the AWS files of an API-key API (usage plan and stage throttles)', ...awsKeys() },
  ],
  invalid: [
    // a hand edit of an edge 429 body: the field, what the design says, what the file says
    {
      name: "nginx's 429 body with another error code",
      design: saas().design,
      files: edit(saas(), 'gateway/nginx-server.conf', (c) => c.replace(/(return 429 .*)RATE_LIMITED/, '$1SLOW_DOWN')),
      expect: [
        {
          messageId: 'edgeBodyField',
          data: { file: 'gateway/nginx-server.conf', field: 'code', design: '"RATE_LIMITED"', shipped: '"SLOW_DOWN"' },
        },
      ],
    },
    {
      name: "nginx's 429 body that is no longer JSON",
      design: saas().design,
      files: edit(saas(), 'gateway/nginx-server.conf', (c) => c.replace(/\}";$/m, '";')),
      expect: [
        {
          messageId: 'edgeBodyUnreadable',
          data: { file: 'gateway/nginx-server.conf', where: 'return 429 in location @rl_too_many_requests' },
        },
      ],
    },
    {
      name: "nginx's 429 body with a $ nginx expands",
      design: saas().design,
      files: edit(saas(), 'gateway/nginx-server.conf', (c) =>
        c.replace(/(return 429 .*)Too many requests/, '$1Too many requests ($request_id)'),
      ),
      expect: [{ messageId: 'edgeBodyUnreadable', data: { file: 'gateway/nginx-server.conf' } }],
    },
    {
      name: "Envoy's 429 mapper with another documentation URL",
      design: keyless('envoy').design,
      files: edit(keyless('envoy'), 'gateway/envoy-local-ratelimit.yaml', (c) =>
        c.replace(/(\n\s+documentation: ).*/, '$1https://elsewhere.example/docs'),
      ),
      expect: [
        {
          messageId: 'edgeBodyField',
          data: {
            file: 'gateway/envoy-local-ratelimit.yaml',
            field: 'documentation',
            design: '"https://census.example/docs/limits"',
            shipped: '"https://elsewhere.example/docs"',
          },
        },
      ],
    },
    {
      name: "Envoy's 429 mapper with a % that opens no command",
      design: keyless('envoy').design,
      files: edit(keyless('envoy'), 'gateway/envoy-local-ratelimit.yaml', (c) => c.replace(/(\n\s+title: ).*/, '$1100% busy')),
      expect: [{ messageId: 'edgeBodyUnreadable', data: { file: 'gateway/envoy-local-ratelimit.yaml' } }],
    },
    {
      name: "Kong's error_message edited on one plugin",
      design: keyless('kong').design,
      files: edit(keyless('kong'), 'gateway/kong.yaml', (c) => c.replace(/error_message: .*/, 'error_message: Slow down')),
      expect: [{ messageId: 'edgeBodyField', data: { file: 'gateway/kong.yaml', field: 'message', shipped: '"Slow down"' } }],
    },
    {
      name: "API Gateway's THROTTLED template without its retry hint",
      design: keyless('aws-api-gateway').design,
      files: editJson(keyless('aws-api-gateway'), 'gateway/aws-api-gateway.json', (doc) => {
        const g = doc.gatewayResponses.find((x: any) => x.Properties.ResponseType === 'THROTTLED').Properties;
        const body = JSON.parse(g.ResponseTemplates['application/json']);
        delete body.retryAfterSeconds;
        g.ResponseTemplates['application/json'] = apiGatewayTemplateJson(body);
      }),
      expect: [
        {
          messageId: 'edgeBodyField',
          data: { file: 'gateway/aws-api-gateway.json', field: 'retryAfterSeconds', shipped: 'absent' },
        },
      ],
    },
    {
      name: "API Gateway's THROTTLED template rewritten as plain JSON (the # of its type URL raw)",
      design: keyless('aws-api-gateway').design,
      files: editJson(keyless('aws-api-gateway'), 'gateway/aws-api-gateway.json', (doc) => {
        const g = doc.gatewayResponses.find((x: any) => x.Properties.ResponseType === 'THROTTLED').Properties;
        g.ResponseTemplates['application/json'] = JSON.stringify(JSON.parse(g.ResponseTemplates['application/json']));
      }),
      expect: [
        {
          messageId: 'edgeBodyUnreadable',
          data: { file: 'gateway/aws-api-gateway.json', where: 'the THROTTLED gateway response (its application/json template)' },
        },
      ],
    },
    {
      name: 'an AWS file that is no longer JSON: one finding for its bodies',
      design: keyless('aws-api-gateway').design,
      files: edit(keyless('aws-api-gateway'), 'gateway/aws-api-gateway.json', (c) => c.replace(/\}\s*$/, '')),
      expect: [
        { messageId: 'retryAfterNotShipped', data: { file: 'gateway/aws-api-gateway.json' } },
        { messageId: 'edgeBodyUnreadable', data: { file: 'gateway/aws-api-gateway.json', where: 'the file' } },
      ],
    },
    {
      name: "AWS WAF's rate-based rules blocking with no custom response body",
      design: keyless('aws-api-gateway').design,
      files: editJson(keyless('aws-api-gateway'), 'gateway/aws-api-gateway.json', (doc) => {
        for (const w of doc.wafRateBasedRules) delete w.Action.Block.CustomResponse.CustomResponseBodyKey;
      }),
      expect: [{ messageId: 'edgeBodyMissing', data: { file: 'gateway/aws-api-gateway.json' } }],
    },
    {
      name: "AWS WAF's custom response body naming other rules",
      design: keyless('aws-api-gateway').design,
      files: editJson(keyless('aws-api-gateway'), 'gateway/aws-api-gateway.json', (doc) => {
        const b = Object.values(doc.wafCustomResponseBodies)[0] as { Content: string };
        const body = JSON.parse(b.Content);
        body.limit.rules = ['someone-else'];
        b.Content = JSON.stringify(body);
      }),
      expect: [
        {
          messageId: 'edgeBodyField',
          data: {
            file: 'gateway/aws-api-gateway.json',
            where: 'WAF custom response body rl-too-many-requests',
            field: 'limit.rules',
            shipped: '["someone-else"]',
          },
        },
      ],
    },
    {
      name: "a Cloudflare rule's custom response with a field the contract does not have",
      design: keyless('cloudflare').design,
      files: editJson(keyless('cloudflare'), 'gateway/cloudflare-ratelimit.json', (doc) => {
        const r = doc.rules[0].action_parameters.response;
        r.content = JSON.stringify({ ...JSON.parse(r.content), upgrade: 'https://pay.example' });
      }),
      expect: [
        {
          messageId: 'edgeBodyField',
          data: { file: 'gateway/cloudflare-ratelimit.json', field: 'upgrade', design: 'absent', shipped: '"https://pay.example"' },
        },
      ],
    },
    {
      name: 'the middleware answers 429 without Retry-After',
      design: main().design,
      files: edit(main(), 'middleware/evaluation.ts', (c) => c.replace("headers.push(['Retry-After', String(retryAfter)]);", '')),
      expect: [{ messageId: 'retryAfterNotShipped', data: { file: 'middleware/evaluation.ts', layer: 'middleware' } }],
    },
    {
      name: 'the gateway answers 429 without Retry-After',
      design: saas().design,
      files: edit(saas(), 'gateway/nginx-server.conf', (c) => c.replace(/^.*add_header Retry-After.*\n/gim, '')),
      expect: [{ messageId: 'retryAfterNotShipped', data: { file: 'gateway/nginx-server.conf', layer: 'nginx limit_req' } }],
    },
    {
      name: 'Envoy fails closed (failure_mode_deny true) with no local reply mapper for its 503',
      design: keyless('envoy').design,
      files: edit(keyless('envoy'), 'gateway/envoy-local-ratelimit.yaml', (c) =>
        c.replace('failure_mode_deny: false', 'failure_mode_deny: true'),
      ),
      expect: [{ messageId: 'unavailableReplyNotShipped', data: { file: 'gateway/envoy-local-ratelimit.yaml', seconds: '5' } }],
    },
    {
      name: 'design.ts sends another header convention than the document',
      design: main().design,
      files: edit(main(), 'middleware/design.ts', (c) =>
        c.replace('headerConvention: "ietf-structured"', 'headerConvention: "x-ratelimit"'),
      ),
      expect: [{ messageId: 'conventionNotShipped', data: { file: 'middleware/design.ts', convention: 'ietf-structured' } }],
    },
    {
      name: 'a header the contract promises that the runtime never sends',
      design: main().design,
      files: edit(main(), 'middleware/responses.ts', (c) => c.replaceAll("'RateLimit'", "'X-State'")),
      expect: [{ messageId: 'headerNotProduced', data: { header: 'RateLimit', file: 'middleware/responses.ts' } }],
    },
    {
      name: 'a silent security rule shipped with full headers',
      design: main().design,
      files: edit(main(), 'middleware/design.ts', (c) => c.replace(/(id: "auth-login-per-ip",[\s\S]*?headers: )"silent"/, '$1"full"')),
      expect: [{ messageId: 'headersNotShipped', ruleId: 'auth-login-per-ip', data: { shipped: 'full', headers: 'silent' } }],
    },
    {
      name: "a soft quota shipped with another hard stop than the document's 429 states",
      design: saas().design,
      files: edit(saas(), 'middleware/design.ts', (c) => c.replace(/(id: "quota-pro",[\s\S]*?limit: )1200000/, '$11000000')),
      expect: [
        {
          messageId: 'hardStopNotShipped',
          ruleId: 'quota-pro',
          data: { quota: '1000000', hardStop: '1200000', file: 'middleware/design.ts', shipped: 'refuses at 1000000' },
        },
      ],
    },
    {
      name: "a soft quota's 429 body without the hard stop in the shipped runtime",
      design: saas().design,
      files: edit(saas(), 'middleware/responses.ts', (c) => c.replace('hardStop: s.limit, ', '')),
      expect: [
        {
          messageId: 'hardStopNotShipped',
          ruleId: 'quota-pro',
          data: { shipped: '(middleware/responses.ts) never writes the body field limit.hardStop' },
        },
      ],
    },
    {
      name: 'the Express adapter is missing',
      design: main().design,
      files: without(main(), 'middleware/express.ts'),
      expect: [{ messageId: 'adapterNotShipped', data: { framework: 'express', file: 'middleware/express.ts' } }],
    },
    {
      name: 'the Koa adapter is missing',
      design: main('koa').design,
      files: without(main('koa'), 'middleware/koa.ts'),
      expect: [{ messageId: 'adapterNotShipped', data: { framework: 'koa', file: 'middleware/koa.ts' } }],
    },
    {
      name: 'no adapter for the framework, and the README does not show the neutral call',
      design: main('other').design,
      files: edit(main('other'), 'README.md', (c) => c.replaceAll('createLimiter(DESIGN', 'makeIt(')),
      expect: [{ messageId: 'neutralCallNotShown', data: { framework: 'other', file: 'README.md' } }],
    },
  ],
});
