/**
 * Every layer of every generated gateway file that can answer 429 sends Retry-After, and the
 * per-gateway checks name the file and layer as soon as a generated file loses it.
 */
import { describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as toYamlText } from 'yaml';
import { Answers } from '../../src/answers/schema.js';
import {
  awsConfig,
  CF_MITIGATION_TIMEOUTS,
  CF_PERIODS,
  cloudflareConfig,
  CLOUDFLARE_CONTENT_TYPES,
} from '../../src/codegen/gateway/cloud.js';
import { edgeRules } from '../../src/codegen/gateway/edge.js';
import { GATEWAY_GENERATORS, gatewayRetryAfterFindings } from '../../src/codegen/gateway/index.js';
import type { CodeFile } from '../../src/codegen/types.js';
import { buildDesign } from '../../src/design/build.js';
import type { Design, Gateway } from '../../src/design/model.js';
import { DATE, exampleAnswers, exampleDesign, exampleNames } from '../helpers/examples.js';
import { hostileDesign } from './support/hostile.js';

type Obj = Record<string, any>;
type G = Exclude<Gateway, 'none'>;
const GATEWAYS = Object.keys(GATEWAY_GENERATORS) as G[];

function designWith(gateway: G): Design {
  const base = exampleAnswers('saas-platform');
  return buildDesign(Answers.parse({ ...base, stack: { ...base.stack, gateway } }), { date: DATE });
}

/** Replace one file's content. */
function edit(files: CodeFile[], path: string, change: (content: string) => string): CodeFile[] {
  return files.map((f) => (f.path === path ? { ...f, content: change(f.content) } : f));
}

function editYaml(files: CodeFile[], path: string, change: (doc: Obj) => void): CodeFile[] {
  return edit(files, path, (c) => {
    const doc = parseYaml(c) as Obj;
    change(doc);
    return toYamlText(doc);
  });
}

function editJson(files: CodeFile[], path: string, change: (doc: Obj) => void): CodeFile[] {
  return edit(files, path, (c) => {
    const doc = JSON.parse(c) as Obj;
    change(doc);
    return JSON.stringify(doc);
  });
}

describe('Retry-After on every 429 a generated gateway file can send', () => {
  it('none missing, for every gateway on every example and the hostile design', () => {
    for (const design of [...exampleNames().map(exampleDesign), hostileDesign(), ...GATEWAYS.map(designWith)]) {
      for (const gateway of GATEWAYS) expect(gatewayRetryAfterFindings(GATEWAY_GENERATORS[gateway](design)), gateway).toEqual([]);
    }
  });

  it('nginx: removing the add_header or the error_page is reported', () => {
    const files = GATEWAY_GENERATORS.nginx(designWith('nginx'));
    const noHeader = edit(files, 'gateway/nginx-server.conf', (c) => c.replace(/^\s*add_header Retry-After .*$/m, ''));
    expect(gatewayRetryAfterFindings(noHeader)).toEqual([
      { file: 'gateway/nginx-server.conf', layer: 'nginx limit_req', missing: expect.stringMatching(/Retry-After/) },
    ]);
    const noPage = edit(files, 'gateway/nginx-server.conf', (c) => c.replace(/^error_page 429 .*$/m, ''));
    expect(gatewayRetryAfterFindings(noPage).map((f) => f.file)).toEqual(['gateway/nginx-server.conf']);
    const status503 = edit(files, 'gateway/nginx.conf', (c) => c.replace(/^limit_req_status 429;$/m, ''));
    expect(gatewayRetryAfterFindings(status503)).toEqual([
      { file: 'gateway/nginx.conf', layer: 'nginx limit_req', missing: expect.stringMatching(/limit_req_status 429/) },
    ]);
  });

  it('Envoy: removing the 429 mapper header leaves the local filter (own header) covered and reports the global filter', () => {
    const files = GATEWAY_GENERATORS.envoy(designWith('envoy'));
    const path = 'gateway/envoy-local-ratelimit.yaml';
    const noMapper = editYaml(files, path, (d) => (d.http_connection_manager.local_reply_config.mappers[0].headers_to_add = []));
    expect(gatewayRetryAfterFindings(noMapper)).toEqual([
      { file: path, layer: 'envoy envoy.filters.http.ratelimit', missing: expect.stringMatching(/Retry-After/) },
    ]);
    const neither = editYaml(noMapper, path, (d) => (d.http_connection_manager.http_filters[0].typed_config.response_headers_to_add = []));
    expect(gatewayRetryAfterFindings(neither).map((f) => f.layer)).toEqual([
      'envoy envoy.filters.http.local_ratelimit',
      'envoy envoy.filters.http.ratelimit',
    ]);
  });

  it('Kong: removing the Retry-After post-function, or a route post-function replacing it, is reported', () => {
    const files = GATEWAY_GENERATORS.kong(designWith('kong'));
    const path = 'gateway/kong.yaml';
    const noPost = editYaml(
      files,
      path,
      (d) => (d.services[0].plugins = d.services[0].plugins.filter((p: Obj) => p.name !== 'post-function')),
    );
    expect(gatewayRetryAfterFindings(noPost)).toEqual([
      { file: path, layer: 'kong rate-limiting-advanced rl-global-ceiling', missing: expect.stringMatching(/Retry-After/) },
      { file: path, layer: 'kong rate-limiting rl-anonymous-per-ip-1', missing: expect.stringMatching(/Retry-After/) },
    ]);
    const noHeader = editYaml(files, path, (d) => {
      const post = d.services[0].plugins.find((p: Obj) => p.name === 'post-function');
      post.config.header_filter = [post.config.header_filter[0].replace(/kong\.response\.set_header\([^)]*\)/, 'return')];
    });
    expect(gatewayRetryAfterFindings(noHeader).map((f) => f.layer)).toEqual([
      'kong rate-limiting-advanced rl-global-ceiling',
      'kong rate-limiting rl-anonymous-per-ip-1',
    ]);
    // Kong resolves one post-function per request: a route's own replaces the service's
    const replaced = editYaml(files, path, (d) =>
      d.services[0].routes[0].plugins.push({ name: 'post-function', config: { header_filter: ['return'] } }),
    );
    expect(gatewayRetryAfterFindings(replaced).map((f) => f.layer)).toEqual([
      'kong rate-limiting-advanced rl-global-ceiling',
      'kong rate-limiting rl-anonymous-per-ip-1',
    ]);
    // client headers on: Kong's plugin sends Retry-After itself
    const shown = editYaml(noPost, path, (d) => {
      for (const p of [...d.services[0].plugins, ...d.services[0].routes[0].plugins]) p.config.hide_client_headers = false;
    });
    expect(gatewayRetryAfterFindings(shown)).toEqual([]);
  });

  it('AWS: API Gateway throttling and WAF each need their Retry-After', () => {
    const files = GATEWAY_GENERATORS['aws-api-gateway'](designWith('aws-api-gateway'));
    const path = 'gateway/aws-api-gateway.json';
    const noThrottled = editJson(
      files,
      path,
      (d) => (d.gatewayResponses = d.gatewayResponses.filter((r: Obj) => r.Properties.ResponseType !== 'THROTTLED')),
    );
    expect(gatewayRetryAfterFindings(noThrottled)).toEqual([
      { file: path, layer: 'aws api-gateway THROTTLED', missing: expect.stringMatching(/THROTTLED/) },
    ]);
    const noHeader = editJson(
      files,
      path,
      (d) => delete d.gatewayResponses[0].Properties.ResponseParameters['gatewayresponse.header.Retry-After'],
    );
    expect(gatewayRetryAfterFindings(noHeader).map((f) => f.layer)).toEqual(['aws api-gateway THROTTLED']);
    const noWaf = editJson(files, path, (d) => (d.wafRateBasedRules[0].Action.Block.CustomResponse.ResponseHeaders = []));
    expect(gatewayRetryAfterFindings(noWaf)).toEqual([
      { file: path, layer: expect.stringMatching(/^aws waf rl-anonymous-per-ip/), missing: expect.stringMatching(/Retry-After/) },
    ]);
    // a usage plan can answer QUOTA_EXCEEDED: with plans, that response needs Retry-After too
    const hostile = GATEWAY_GENERATORS['aws-api-gateway'](hostileDesign());
    expect((JSON.parse(hostile[0]!.content) as Obj).usagePlans).toHaveLength(1);
    const noQuota = editJson(
      hostile,
      path,
      (d) => (d.gatewayResponses = d.gatewayResponses.filter((r: Obj) => r.Properties.ResponseType !== 'QUOTA_EXCEEDED')),
    );
    expect(gatewayRetryAfterFindings(noQuota).map((f) => f.layer)).toEqual(['aws api-gateway QUOTA_EXCEEDED']);
  });

  it('AWS gateway responses: 429 with a fixed Retry-After that is one token of the slowest throttle', () => {
    for (const design of [designWith('aws-api-gateway'), hostileDesign()]) {
      const json = awsConfig(design) as Obj;
      const byType = Object.fromEntries((json.gatewayResponses as Obj[]).map((r) => [r.Properties.ResponseType, r]));
      expect(Object.keys(byType).sort()).toEqual(['QUOTA_EXCEEDED', 'THROTTLED']);
      const throttles = edgeRules(design).filter((r) => r.key === 'global' || r.key === 'api-key');
      const expected = Math.max(1, ...throttles.map((r) => Math.ceil(r.rate.periodSeconds / r.rate.requests)));
      const throttled = byType.THROTTLED!.Properties;
      expect(byType.THROTTLED!.Type).toBe('AWS::ApiGateway::GatewayResponse');
      expect(throttled.StatusCode).toBe('429');
      expect(throttled.ResponseParameters['gatewayresponse.header.Retry-After']).toBe(`'${expected}'`);
      const body = JSON.parse(throttled.ResponseTemplates['application/json']);
      expect(body).toMatchObject({ status: 429, code: 'RATE_LIMITED', retryAfterSeconds: expected });
      expect(byType.QUOTA_EXCEEDED!.Properties.ResponseParameters['gatewayresponse.header.Retry-After']).toBe("'86400'");
    }
  });

  it('Cloudflare: a content type Cloudflare accepts, a problem-shaped body, and the block action', () => {
    for (const design of [designWith('cloudflare'), hostileDesign()]) {
      for (const rule of (cloudflareConfig(design) as Obj).rules as Obj[]) {
        expect(CLOUDFLARE_CONTENT_TYPES).toContain(rule.action_parameters.response.content_type);
        expect(rule.action_parameters.response.content_type).toBe('application/json');
        expect(JSON.parse(rule.action_parameters.response.content)).toMatchObject({
          type: expect.any(String),
          title: expect.any(String),
          status: 429,
        });
      }
    }
    // a slow rule: the block (and so Cloudflare's Retry-After) lasts an allowed duration covering its wait
    const base = designWith('cloudflare');
    const slow: Design = {
      ...base,
      rules: base.rules.map((r) => (r.id === 'anonymous-per-ip' ? { ...r, rate: { requests: 10, periodSeconds: 900 } } : r)),
    };
    for (const rule of (cloudflareConfig(slow) as Obj).rules as Obj[]) {
      expect(CF_MITIGATION_TIMEOUTS).toContain(rule.ratelimit.mitigation_timeout);
      expect(CF_PERIODS).toContain(rule.ratelimit.period);
      expect(rule.ratelimit.mitigation_timeout).toBeGreaterThanOrEqual(90);
      expect(JSON.parse(rule.action_parameters.response.content).retryAfterSeconds).toBe(rule.ratelimit.mitigation_timeout);
    }
    const files = GATEWAY_GENERATORS.cloudflare(designWith('cloudflare'));
    const path = 'gateway/cloudflare-ratelimit.json';
    const problem = editJson(files, path, (d) => (d.rules[0].action_parameters.response.content_type = 'application/problem+json'));
    expect(gatewayRetryAfterFindings(problem)).toEqual([
      { file: path, layer: 'cloudflare rule global-ceiling', missing: expect.stringMatching(/content type/) },
    ]);
    const challenge = editJson(files, path, (d) => (d.rules[1].action = 'managed_challenge'));
    expect(gatewayRetryAfterFindings(challenge)).toEqual([
      { file: path, layer: 'cloudflare rule anonymous-per-ip', missing: expect.stringMatching(/block action/) },
    ]);
  });
});
