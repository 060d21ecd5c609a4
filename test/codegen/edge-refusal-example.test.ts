/**
 * The document's example of the gateway's edge 429, for every gateway that enforces edge rules,
 * is what the shipped gateway file returns. Each shipped file is read back on its own terms
 * (nginx directives, Envoy and Kong YAML, the AWS and Cloudflare JSON) into the status, headers
 * and body it answers with, and compared with the examples of the Markdown and the HTML document:
 * one example per distinct shape (Envoy's local and global filters, Kong's two plugins, API
 * Gateway's throttles and AWS WAF), each naming the rules it answers for.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { Answers } from '../../src/answers/schema.js';
import { generateGateway } from '../../src/codegen/gateway/index.js';
import type { CodeFile } from '../../src/codegen/types.js';
import { checkDesign } from '../../src/constraints/index.js';
import { buildDesign } from '../../src/design/build.js';
import type { Design, Gateway } from '../../src/design/model.js';
import { renderHtml } from '../../src/render/html/index.js';
import { renderMarkdown } from '../../src/render/markdown/index.js';
import { ROOT } from '../helpers/examples.js';
import type { EdgeBodyPlace } from '../../src/codegen/gateway/edge.js';
import { nginxDirectives, nginxReturnRead } from '../../src/codegen/gateway/reading.js';
import { shippedEdgeBodies } from '../../src/codegen/gateway/shipped.js';
import { TEMPLATE_DOCS_URL } from './support/hostile.js';

const DATE = '2025-01-01';
const SVG = (): string => '<svg viewBox="0 0 10 10"></svg>';

interface Example {
  /** The rule ids the sentence before the example names. */
  rules: string[];
  /** The sentence itself, as text. */
  text: string;
  status: string;
  headers: [string, string][];
  body: unknown;
}

/** An example's response block: status line, headers, a blank line, the JSON body. */
function parseResponse(block: string): Pick<Example, 'status' | 'headers' | 'body'> {
  const [head, ...rest] = block.split('\n\n');
  const [status, ...lines] = (head as string).split('\n');
  return {
    status: status as string,
    headers: lines.map((l) => {
      const i = l.indexOf(': ');
      return [l.slice(0, i), l.slice(i + 2)];
    }),
    body: JSON.parse(rest.join('\n\n')),
  };
}

function markdownExamples(md: string): Example[] {
  const re = /\n\nWhen ((?:`[^`]+`(?:, )?)+) refuses? a call at the edge, ([\s\S]*?)\n\n```http\n([\s\S]*?)\n```/g;
  return [...md.matchAll(re)].map((m) => ({
    rules: [...(m[1] as string).matchAll(/`([^`]+)`/g)].map((x) => x[1] as string),
    text: (m[2] as string).replace(/\s+/g, ' '),
    ...parseResponse(m[3] as string),
  }));
}

const unescapeHtml = (s: string): string =>
  s
    .replace(/<[^>]+>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');

function htmlExamples(html: string): Example[] {
  const re =
    /<p>When ((?:<code>[^<]+<\/code>(?:, )?)+) refuses? a call at the edge, ([\s\S]*?)<\/p>\s*<pre><code class="language-http">([\s\S]*?)<\/code><\/pre>/g;
  return [...html.matchAll(re)].map((m) => ({
    rules: [...(m[1] as string).matchAll(/<code>([^<]+)<\/code>/g)].map((x) => unescapeHtml(x[1] as string)),
    text: unescapeHtml(m[2] as string).replace(/\s+/g, ' '),
    ...parseResponse(unescapeHtml(m[3] as string).replace(/\n$/, '')),
  }));
}

/** What the shipped file answers: one entry per distinct 429, its rules where the file names them. */
interface Shipped {
  rules?: string[];
  headers: [string, string][];
  body: unknown;
  /** Headers the gateway adds itself, which the example shows though no line of the file sets them. */
  byGateway?: [string, RegExp][];
}

const file = (files: CodeFile[], p: string): string => {
  const f = files.find((x) => x.path === p);
  expect(f, p).toBeDefined();
  return f!.content;
};

/** The body of a place of the gateway file, as validate reads it (read the way the gateway reads it, then parsed): one body, readable. */
function bodyAt(files: CodeFile[], place: EdgeBodyPlace): unknown {
  const bodies = shippedEdgeBodies(files).filter((b) => b.writtenBy === place);
  expect(bodies.length, place).toBeGreaterThan(0);
  for (const b of bodies) expect(b.unreadable, `${b.file}: ${b.where}`).toBeUndefined();
  expect(new Set(bodies.map((b) => JSON.stringify(b.body))).size, `${place}: one body`).toBe(1);
  return bodies[0]!.body;
}

function nginxShipped(files: CodeFile[]): Shipped[] {
  const directives = nginxDirectives(file(files, 'gateway/nginx-server.conf'));
  const page = directives.find((d) => d.name === 'error_page' && d.args[0] === '429')?.args.at(-1);
  const location = directives.find((d) => d.name === 'location' && d.args.at(-1) === page)?.block ?? [];
  const type = location.find((d) => d.name === 'default_type')?.args[0] as string;
  const added = location
    .filter((d) => d.name === 'add_header' && d.args[2] === 'always')
    .map((d) => [d.args[0], nginxReturnRead(d.args[1] as string)] as [string, string]);
  return [{ headers: [['Content-Type', type], ...added], body: bodyAt(files, 'nginx-error-page') }];
}

function envoyShipped(files: CodeFile[]): Shipped[] {
  const doc = parseYaml(file(files, 'gateway/envoy-local-ratelimit.yaml'));
  const hcm = doc.http_connection_manager;
  const mapper = hcm.local_reply_config.mappers.find((m: any) => m.filter?.status_code_filter?.comparison?.value?.default_value === 429);
  const headers: [string, string][] = [
    ['content-type', mapper.body_format_override.content_type],
    ...mapper.headers_to_add.map((h: any) => [h.header.key, h.header.value] as [string, string]),
  ];
  // what Envoy writes from the json_format: each of its strings is a format string
  const body = bodyAt(files, 'envoy-local-reply');
  const out: Shipped[] = [];
  const local = hcm.http_filters.find((f: any) => f.name === 'envoy.filters.http.local_ratelimit');
  if (local) {
    // the local filter's own headers agree with the mapper's
    for (const h of local.typed_config.response_headers_to_add ?? []) expect(headers).toContainEqual([h.header.key, h.header.value]);
    out.push({ headers, body });
  }
  const global = hcm.http_filters.find((f: any) => f.name === 'envoy.filters.http.ratelimit');
  if (global) {
    const service = parseYaml(file(files, 'gateway/ratelimit-service.yaml'));
    out.push({
      rules: service.descriptors.map((d: any) => d.value),
      headers,
      body,
      // Envoy's global filter adds it unless the file turns it off
      byGateway: global.typed_config.disable_x_envoy_ratelimited_header === true ? [] : [['x-envoy-ratelimited', /^true$/]],
    });
  }
  return out;
}

function kongShipped(files: CodeFile[]): Shipped[] {
  const doc = parseYaml(file(files, 'gateway/kong.yaml'));
  const plugins: any[] = [];
  for (const s of doc.services) {
    plugins.push(...(s.plugins ?? []));
    for (const r of s.routes ?? []) plugins.push(...(r.plugins ?? []));
  }
  const lua = plugins.find((p) => p.name === 'post-function').config.header_filter.join('\n');
  const retry = /set_header\("Retry-After", "(\d+)"\)/.exec(lua)?.[1] as string;
  expect(lua).toContain('get_status() == 429');
  const rulesOf = (ps: any[]): string[] => [
    ...new Set(ps.flatMap((p) => p.tags.filter((t: string) => t.startsWith('rule-')).map((t: string) => t.slice(5)))),
  ];
  const out: Shipped[] = [];
  const advanced = plugins.filter((p) => p.name === 'rate-limiting-advanced');
  if (advanced.length > 0) {
    expect(advanced[0].config.hide_client_headers).toBe(true);
    out.push({
      rules: rulesOf(advanced),
      headers: [['Retry-After', retry]],
      byGateway: [['Content-Type', /^application\/json; charset=utf-8$/]],
      body: bodyAt(files, 'kong-rate-limiting-advanced'),
    });
  }
  const basic = plugins.filter((p) => p.name === 'rate-limiting');
  if (basic.length > 0) {
    expect(new Set(basic.map((p) => p.config.error_message)).size).toBe(1);
    out.push({
      rules: rulesOf(basic),
      headers: [['Retry-After', retry]],
      byGateway: [['Content-Type', /^application\/json; charset=utf-8$/]],
      body: bodyAt(files, 'kong-rate-limiting'),
    });
  }
  return out;
}

function cloudflareShipped(files: CodeFile[]): Shipped[] {
  const doc = JSON.parse(file(files, 'gateway/cloudflare-ratelimit.json'));
  const responses = doc.rules.map((r: any) => JSON.stringify(r.action_parameters.response));
  expect(new Set(responses).size).toBe(1);
  const r = doc.rules[0];
  const timeout = r.ratelimit.mitigation_timeout;
  return [
    {
      rules: doc.rules.map((x: any) => x.description.split(':')[0]),
      headers: [['Content-Type', r.action_parameters.response.content_type]],
      // Cloudflare writes it, counting down the block: no field of the file holds a number for it
      byGateway: [['Retry-After', new RegExp(`^<seconds left of the ${timeout} s block>$`)]],
      body: bodyAt(files, 'cloudflare-rule-response'),
    },
  ];
}

const WAF_TYPES: Record<string, string> = { APPLICATION_JSON: 'application/json' };

function awsShipped(files: CodeFile[], design: Design): Shipped[] {
  const doc = JSON.parse(file(files, 'gateway/aws-api-gateway.json'));
  const out: Shipped[] = [];
  const throttled = [...(doc.stageMethodSettings ?? []).map((m: any) => m._rule), ...Object.keys(doc.usagePlans?.[0]?._rules ?? {})];
  // a design's global rules refused by the account limit alone would still answer THROTTLED
  const throttleRules = [
    ...new Set([
      ...throttled,
      ...design.rules.filter((r) => r.layer === 'edge' && (r.identity === 'global' || r.identity === 'api-key')).map((r) => r.id),
    ]),
  ];
  if (throttleRules.length > 0) {
    const g = doc.gatewayResponses.find((x: any) => x.Properties.ResponseType === 'THROTTLED').Properties;
    expect(g.StatusCode).toBe('429');
    const type = Object.keys(g.ResponseTemplates)[0] as string;
    out.push({
      rules: throttleRules,
      headers: [
        ['Content-Type', type],
        ...Object.entries(g.ResponseParameters).map(
          ([k, v]) => [k.replace('gatewayresponse.header.', ''), String(v).replace(/^'|'$/g, '')] as [string, string],
        ),
      ],
      body: bodyAt(files, 'aws-throttled-response'),
    });
  }
  if ((doc.wafRateBasedRules ?? []).length > 0) {
    const actions = doc.wafRateBasedRules.map((r: any) => JSON.stringify(r.Action));
    expect(new Set(actions).size).toBe(1);
    const custom = doc.wafRateBasedRules[0].Action.Block.CustomResponse;
    expect(custom.ResponseCode).toBe(429);
    const body = doc.wafCustomResponseBodies[custom.CustomResponseBodyKey];
    out.push({
      rules: doc.wafRateBasedRules.map((r: any) => /^(\S+): /.exec(r._note.split('. ')[1] ?? '')?.[1] ?? ''),
      headers: [
        ['Content-Type', WAF_TYPES[body.ContentType] as string],
        ...custom.ResponseHeaders.map((h: any) => [h.Name, h.Value] as [string, string]),
      ],
      body: bodyAt(files, 'aws-waf-custom-response'),
    });
  }
  return out;
}

function shipped(design: Design, files: CodeFile[]): Shipped[] {
  switch (design.scope.gateway) {
    case 'nginx':
      return nginxShipped(files);
    case 'envoy':
      return envoyShipped(files);
    case 'kong':
      return kongShipped(files);
    case 'cloudflare':
      return cloudflareShipped(files);
    case 'aws-api-gateway':
      return awsShipped(files, design);
    default:
      return [];
  }
}

function answersAt(rel: string, gateway?: Gateway, docsUrl?: string): unknown {
  const raw = JSON.parse(readFileSync(path.join(ROOT, rel), 'utf8'));
  if (gateway) raw.stack.gateway = gateway;
  if (docsUrl) raw.headers = { ...raw.headers, docsUrl };
  return raw;
}

/** The example agrees with one shipped answer: every header the file writes, those the gateway adds, the body; nothing else. */
function expectMatches(example: Example, ship: Shipped, label: string): void {
  expect(example.status, label).toBe('HTTP/1.1 429 Too Many Requests');
  const extra = ship.byGateway ?? [];
  const written = example.headers.filter(([name]) => !extra.some(([n]) => n.toLowerCase() === name.toLowerCase()));
  expect(new Map(written.map(([n, v]) => [n.toLowerCase(), v])), label).toEqual(
    new Map(ship.headers.map(([n, v]) => [n.toLowerCase(), v])),
  );
  for (const [name, value] of extra) {
    const shown = example.headers.find(([n]) => n.toLowerCase() === name.toLowerCase());
    expect(shown, `${label}: ${name}`).toBeDefined();
    expect(shown![1], `${label}: ${name}`).toMatch(value);
  }
  // Content-Type first, as a client reads the response
  expect(example.headers[0]?.[0].toLowerCase(), label).toBe('content-type');
  expect(example.body, label).toEqual(ship.body);
}

const CASES: { name: string; answers: string; gateway?: Gateway; docsUrl?: string; shapes: number }[] = [
  { name: 'nginx (ceiling and a per-IP rule)', answers: 'test/fixtures/review/fastify-nginx-sessions.answers.json', shapes: 1 },
  {
    name: 'nginx beside limit_req zones already in place (their refusals share the page)',
    answers: 'test/fixtures/review/koa-existing-nginx-mixed.answers.json',
    shapes: 1,
  },
  { name: 'Envoy (local filter and the rate limit service)', answers: 'test/fixtures/review/express-envoy-plans.answers.json', shapes: 2 },
  { name: 'Envoy, anonymous API (local and global)', answers: 'test/fixtures/review/go-envoy-anonymous.answers.json', shapes: 2 },
  { name: 'Kong (the ceiling alone: rate-limiting-advanced)', answers: 'test/fixtures/review/fastify-kong.answers.json', shapes: 1 },
  {
    name: 'Kong (ceiling and a per-IP rule: both plugins)',
    answers: 'test/fixtures/review/express-envoy-plans.answers.json',
    gateway: 'kong',
    shapes: 2,
  },
  { name: 'Cloudflare', answers: 'test/fixtures/review/express-cloudflare.answers.json', shapes: 1 },
  {
    name: 'Cloudflare (ceiling and a per-IP rule)',
    answers: 'test/fixtures/review/express-envoy-plans.answers.json',
    gateway: 'cloudflare',
    shapes: 1,
  },
  { name: 'AWS (stage throttle and WAF per-IP rules)', answers: 'test/fixtures/review/koa-aws-costs.answers.json', shapes: 2 },
  { name: 'AWS (stage throttle and usage plan API-key rules)', answers: 'test/fixtures/gateway/aws-api-keys.answers.json', shapes: 1 },
  { name: 'the nginx example (saas-platform)', answers: 'examples/saas-platform.answers.json', shapes: 1 },
  // a documentation URL holding what each gateway's language reads: the body still says it exactly
  ...(
    [
      ['nginx', 'test/fixtures/review/fastify-nginx-sessions.answers.json', undefined, 1],
      ['Envoy', 'test/fixtures/review/express-envoy-plans.answers.json', undefined, 2],
      ['Kong', 'test/fixtures/review/express-envoy-plans.answers.json', 'kong', 2],
      ['Cloudflare', 'test/fixtures/review/express-envoy-plans.answers.json', 'cloudflare', 1],
      ['AWS (API Gateway and WAF)', 'test/fixtures/review/koa-aws-costs.answers.json', undefined, 2],
      ['AWS (usage plan)', 'test/fixtures/gateway/aws-api-keys.answers.json', undefined, 1],
    ] as const
  ).map(([name, answers, gateway, shapes]) => ({
    name: `${name}: a documentation URL with $, #, %, quotes, ; and braces in it`,
    answers,
    gateway,
    docsUrl: TEMPLATE_DOCS_URL,
    shapes,
  })),
];

describe("the document's edge 429 is what the shipped gateway file returns", () => {
  for (const c of CASES) {
    it(c.name, () => {
      const design = buildDesign(Answers.parse(answersAt(c.answers, c.gateway, c.docsUrl)), { date: DATE });
      if (c.docsUrl) expect(design.contract.docsUrl).toBe(c.docsUrl);
      const input = { design, checks: checkDesign(design) };
      const files = generateGateway(design);
      const ships = shipped(design, files);
      expect(ships.length, 'distinct 429s in the shipped file').toBe(c.shapes);
      const md = renderMarkdown(input, { layout: 'single' })[0]?.content ?? '';
      const html = renderHtml(input, { layout: 'single', diagrams: SVG })
        .map((f) => f.content)
        .join('\n');
      for (const [format, examples] of [
        ['markdown', markdownExamples(md)],
        ['html', htmlExamples(html)],
      ] as const) {
        expect(examples.length, `${format}: one example per distinct 429`).toBe(ships.length);
        // every edge rule the gateway counts is named by exactly one example
        expect(examples.flatMap((e) => e.rules).sort(), format).toEqual(
          [...new Set(ships.flatMap((s) => s.rules ?? examples.flatMap((e) => e.rules)))].sort(),
        );
        ships.forEach((s, i) => {
          const e = examples[i] as Example;
          if (s.rules) expect(e.rules.sort(), `${format} ${i}`).toEqual([...s.rules].sort());
          expectMatches(e, s, `${format} example ${i + 1}`);
        });
      }
    });
  }

  it('Envoy: a rule the rate limit service counts per minute gets a Retry-After of its whole window, never one emission interval', () => {
    const raw = answersAt('test/fixtures/review/express-envoy-plans.answers.json') as { rules?: unknown[] };
    raw.rules = [{ id: 'anonymous-per-ip', rate: { requests: 600, per: 'minute' } }];
    const design = buildDesign(Answers.parse(raw), { date: DATE });
    const service = parseYaml(generateGateway(design).find((f) => f.path.endsWith('ratelimit-service.yaml'))?.content ?? '');
    expect(service.descriptors[0].descriptors[0].rate_limit).toEqual({ unit: 'minute', requests_per_unit: 600 });
    // its body holds numbers, which Envoy takes in a json_format since 1.24 (toFormatNumberValue)
    expect(generateGateway(design).find((f) => f.path.endsWith('envoy-local-ratelimit.yaml'))?.content).toContain(
      '# Needs Envoy 1.24 or later',
    );
    const ships = envoyShipped(generateGateway(design));
    for (const ship of ships) expect(new Map(ship.headers).get('retry-after')).toBe('60');
    const examples = markdownExamples(renderMarkdown({ design, checks: checkDesign(design) }, { layout: 'single' })[0]?.content ?? '');
    expect(examples.map((e) => new Map(e.headers.map(([n, v]) => [n.toLowerCase(), v])).get('retry-after'))).toEqual(['60', '60']);
    expect(examples[0]?.text).toContain('a whole window of the slowest rule the rate limit service counts');
  });

  it('says what is not problem+json, and what the gateway writes itself', () => {
    const text = (rel: string, gateway?: Gateway): string => {
      const design = buildDesign(Answers.parse(answersAt(rel, gateway)), { date: DATE });
      return markdownExamples(renderMarkdown({ design, checks: checkDesign(design) }, { layout: 'single' })[0]?.content ?? '')
        .map((e) => e.text)
        .join('\n');
    };
    const kong = text('test/fixtures/review/express-envoy-plans.answers.json', 'kong');
    expect(kong).toContain("Kong's own JSON (not problem+json)");
    expect(kong).toContain('Accept header');
    const cloudflare = text('test/fixtures/review/express-cloudflare.answers.json');
    expect(cloudflare).toContain('the problem shape is served as application/json');
    expect(cloudflare).toContain('Cloudflare writes Retry-After itself');
    const aws = text('test/fixtures/review/koa-aws-costs.answers.json');
    expect(aws).toContain('the problem shape is served as application/json');
    const envoy = text('test/fixtures/review/express-envoy-plans.answers.json');
    expect(envoy).toContain('x-envoy-ratelimited: true');
  });

  it('the error bodies claim problem+json for every rejection only where the edge sends it too', () => {
    const intro = (rel: string, gateway?: Gateway): string => {
      const design = buildDesign(Answers.parse(answersAt(rel, gateway)), { date: DATE });
      const md = renderMarkdown({ design, checks: checkDesign(design) }, { layout: 'single' })[0]?.content ?? '';
      const at = md.search(/### [\d.]+ Error bodies/);
      expect(at, rel).toBeGreaterThan(0);
      return md.slice(at, md.indexOf('```', at)).replace(/\s+/g, ' ');
    };
    for (const [rel, gateway] of [
      ['test/fixtures/review/express-envoy-plans.answers.json', 'kong'],
      ['test/fixtures/review/express-cloudflare.answers.json', undefined],
      ['test/fixtures/review/koa-aws-costs.answers.json', undefined],
    ] as const) {
      const text = intro(rel, gateway);
      expect(text, rel).toContain("The application's rejections use the problem details format");
      expect(text, rel).toContain('which is not problem+json');
    }
    for (const rel of [
      'test/fixtures/review/fastify-nginx-sessions.answers.json',
      'test/fixtures/review/express-envoy-plans.answers.json',
    ]) {
      const text = intro(rel);
      expect(text, rel).toContain('Rejections use the problem details format');
      expect(text, rel).not.toContain('not problem+json');
    }
  });
});
