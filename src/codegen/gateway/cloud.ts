/**
 * Managed edges: AWS API Gateway (stage throttling, usage plans, and AWS WAF rate-based
 * rules for per-IP limits, which API Gateway itself cannot key on) and Cloudflare (rate
 * limiting rules). Neither has a config file the way nginx does, so these are JSON
 * examples to adapt, each labelled as such in its `_comment` field: the resource shapes of
 * CloudFormation and of Cloudflare's Rulesets API, filled with the design's numbers.
 */
import {
  AWS_ACCOUNT_LIMIT_TEXT,
  apiGatewayPath,
  awsKeyPlan,
  CF_PERIODS,
  type EdgeWindow,
  WAF_UNBLOCK_DELAY_SECONDS,
  wafMetricName,
  edgeCounter,
  edgeMatchingGap,
  edgeShadowHow,
  wafPathNote,
  wafPathRegex,
} from '../../design/gateway-behaviour.js';
import type { Design } from '../../design/model.js';
import { slug } from '../../design/naming.js';
import { TOOL_VERSION } from '../../version.js';
import { apiGatewayTemplateJson, cfNormalizedPath, cfString, gatewayName, oneLine, regexLiteral } from '../../escape/index.js';
import { formatNumber } from '../../format.js';
import type { CodeFile } from '../types.js';
import {
  API_KEY_HEADER,
  asciiLower,
  edgeProblemBody,
  edgeRetryAfter,
  edgeRules,
  escapedBodyNote,
  exemptRoutes,
  rateText,
  type EdgeRefusal,
  type EdgeRoute,
  type EdgeRule,
  type RetryAfterFinding,
  failStatement,
  killSwitchNote,
  refusalHeader,
  routeBody,
} from './edge.js';

export const AWS_PATH = 'gateway/aws-api-gateway.json';
export const CLOUDFLARE_PATH = 'gateway/cloudflare-ratelimit.json';

/** The content types Cloudflare accepts for a rate limiting rule's custom response. */
export const CLOUDFLARE_CONTENT_TYPES = ['application/json', 'text/html', 'text/plain', 'text/xml'] as const;
const CLOUDFLARE_CONTENT_TYPE: (typeof CLOUDFLARE_CONTENT_TYPES)[number] = 'application/json';

/** API Gateway's own 429s: its throttling, and a usage plan's quota. */
const AWS_429_RESPONSES = ['THROTTLED', 'QUOTA_EXCEEDED'] as const;
const GATEWAY_RESPONSE_HEADER = 'gatewayresponse.header.';
const RETRY_AFTER_PARAM = `${GATEWAY_RESPONSE_HEADER}Retry-After`;
/** The ContentType a WAF custom response body names, by the Content-Type it is served with. */
const WAF_CONTENT_TYPES: Readonly<Record<string, string>> = {
  'application/json': 'APPLICATION_JSON',
  'text/plain': 'TEXT_PLAIN',
  'text/html': 'TEXT_HTML',
};
/** A usage plan quota resets at the start of its period: a day is the shortest (and the default here). */
const QUOTA_RETRY_AFTER = 86400;

const perSecond = (r: EdgeRule): number => r.rate.requests / r.rate.periodSeconds;

/** What the file enforces for a rule: the window and burst the design states for it (its matrix row). */
const windowOf = (design: Design, r: EdgeRule): EdgeWindow => edgeCounter(r.rule, design.scope).window(r.rate, r.burst);

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

export { apiGatewayPath };

/**
 * A resource path as a stage's MethodSettings ResourcePath wants it in CloudFormation: each
 * slash encoded as ~1 after the leading one (/v1/orders becomes /~1v1~1orders); the root stays /.
 */
export function methodSettingPath(path: string): string {
  return path === '/' ? '/' : `/${path.replaceAll('/', '~1')}`;
}

/** Where API Gateway and AWS WAF keep an edge rule's count, for its fail-mode statement. */
const AWS_WHERE = "API Gateway counts it in AWS's own fleet";
const WAF_WHERE = "AWS WAF counts it in AWS's own fleet";

/** The name of the design's one usage plan for its API-key rules (a key joins one usage plan per stage). */
export function awsUsagePlanName(design: Design): string {
  return `${slug(design.scope.projectName)}-api-keys`;
}

/** application/problem+json is not a type API Gateway's templates or WAF's bodies are served as: the problem shape goes as JSON. */
const AWS_CONTENT_TYPE = 'application/json';

/**
 * The 429s of the AWS file: API Gateway's THROTTLED gateway response, for the stage and usage
 * plan throttles (the global and API-key rules; it goes in the file whether or not one is
 * there, since the account's own limit throttles too), and the WAF rate-based rules' custom
 * response, for the per-IP rules. awsConfig writes both from these; `rules` is empty when the
 * design has none of that kind.
 */
function awsAnswers(design: Design): { throttle: EdgeRefusal & { rules: EdgeRule[] }; waf: EdgeRefusal & { rules: EdgeRule[] } } {
  const rules = edgeRules(design);
  const throttled = rules.filter((r) => r.key === 'global' || r.key === 'api-key');
  const ipRules = rules.filter((r) => r.key === 'ip');
  // API Gateway throttles with token buckets (stage, method and usage plan settings, and the
  // account's own limit): after a refusal the next token comes one emission interval later
  const throttleRetryAfter = edgeRetryAfter(throttled);
  // WAF refuses until it notices that the rate over its evaluation window has fallen: the longest
  // window, plus the delay AWS states for noticing, is the honest wait
  const wafRetryAfter = Math.max(
    edgeRetryAfter(rules),
    ...ipRules.map((r) => windowOf(design, r).periodSeconds + WAF_UNBLOCK_DELAY_SECONDS),
  );
  const served = 'API Gateway and AWS WAF offer no problem+json type: the problem shape is served as application/json.';
  return {
    throttle: {
      rules: throttled,
      by: "API Gateway's throttling (its THROTTLED gateway response)",
      writtenBy: 'aws-throttled-response',
      ruleIds: throttled.map((r) => r.id),
      ...gatewayAnswer(design, throttled, throttleRetryAfter),
      notes: [
        served,
        `Retry-After is one token of the slowest throttle; the account's own limit answers with the same response.`,
        ...escapedBodyNote(
          edgeProblemBody(design, throttled, throttleRetryAfter),
          '$#',
          'API Gateway substitutes $ references in a gateway response template (and # would open VTL comments and directives, were it read as VTL)',
        ),
      ],
    },
    waf: {
      rules: ipRules,
      by: "AWS WAF (the rate-based rule's Block action, with its custom response)",
      writtenBy: 'aws-waf-custom-response',
      ruleIds: ipRules.map((r) => r.id),
      headers: [
        { name: 'Content-Type', value: AWS_CONTENT_TYPE },
        { name: 'Retry-After', value: String(wafRetryAfter) },
      ],
      body: edgeProblemBody(design, ipRules, wafRetryAfter),
      notes: [
        served,
        `WAF blocks until it notices that the rate over its evaluation window has fallen, which AWS says usually takes up to ${WAF_UNBLOCK_DELAY_SECONDS} s after the fall, so Retry-After is the longest window plus ${WAF_UNBLOCK_DELAY_SECONDS} s.`,
      ],
    },
  };
}

/** A 429 gateway response of API Gateway's own throttles and quotas: its headers (Content-Type first) and body. */
function gatewayAnswer(design: Design, rules: EdgeRule[], seconds: number): Pick<EdgeRefusal, 'headers' | 'body'> {
  return {
    headers: [
      { name: 'Content-Type', value: AWS_CONTENT_TYPE },
      { name: 'Retry-After', value: String(seconds) },
      { name: 'Cache-Control', value: 'no-store' },
    ],
    body: edgeProblemBody(design, rules, seconds),
  };
}

/** The most characters AWS WAF takes in a custom response body's Content (CustomResponseBody, AWS WAF API Reference). */
export const WAF_BODY_MAX_CHARS = 10_240;
/** The most bytes API Gateway takes in a mapping template, gateway response templates included ("Maximum mapping template size", REST API quotas). */
export const API_GATEWAY_TEMPLATE_MAX_BYTES = 300 * 1024;

/**
 * The bodies the AWS file writes that AWS would refuse for their size: the WAF custom response
 * (its Content, in characters) and the gateway response templates (in bytes). Each names where
 * the file writes it, its size and the limit; none when every body fits.
 */
export function awsBodyOversize(design: Design): { where: string; size: string; limit: string; over: number; rules: number }[] {
  if (design.scope.gateway !== 'aws-api-gateway' || edgeRules(design).length === 0) return [];
  const { throttle, waf } = awsAnswers(design);
  const out: { where: string; size: string; limit: string; over: number; rules: number }[] = [];
  const content = JSON.stringify(waf.body);
  if (waf.rules.length > 0 && content.length > WAF_BODY_MAX_CHARS)
    out.push({
      where: 'the AWS WAF custom response body (wafCustomResponseBodies Content)',
      size: `${formatNumber(content.length)} characters`,
      limit: `the ${formatNumber(WAF_BODY_MAX_CHARS)} characters AWS WAF accepts`,
      over: content.length - WAF_BODY_MAX_CHARS,
      rules: waf.rules.length,
    });
  for (const [type, seconds] of [
    ['THROTTLED', Number(refusalHeader(throttle, 'Retry-After')?.value)],
    ['QUOTA_EXCEEDED', QUOTA_RETRY_AFTER],
  ] as const) {
    const bytes = Buffer.byteLength(apiGatewayTemplateJson(gatewayAnswer(design, throttle.rules, seconds).body), 'utf8');
    if (bytes > API_GATEWAY_TEMPLATE_MAX_BYTES)
      out.push({
        where: `the ${type} gateway response template`,
        size: `${formatNumber(bytes)} bytes`,
        limit: `the ${formatNumber(API_GATEWAY_TEMPLATE_MAX_BYTES)} bytes (300 KB) API Gateway accepts in a template`,
        over: bytes - API_GATEWAY_TEMPLATE_MAX_BYTES,
        rules: throttle.rules.length,
      });
  }
  return out;
}

/** The 429s the AWS file answers for the design's edge rules: API Gateway's throttles, AWS WAF's rate-based rules. */
export function awsEdgeRefusals(design: Design): EdgeRefusal[] {
  const { throttle, waf } = awsAnswers(design);
  return [throttle, waf].filter((x) => x.rules.length > 0).map(({ rules: _rules, ...refusal }) => refusal);
}

/** A header's value in a gateway response's ResponseParameters: a static value, single-quoted. */
function staticParam(value: string | undefined): string {
  return `'${value ?? ''}'`;
}

/** The JSON example for AWS, as data (exported for tests). */
export function awsConfig(design: Design): Record<string, unknown> {
  const rules = edgeRules(design);
  const globalRules = rules.filter((r) => r.key === 'global');
  const keyRules = rules.filter((r) => r.key === 'api-key');
  const ipRules = rules.filter((r) => r.key === 'ip');
  const other = rules.filter((r) => r.key === 'unsupported');
  const methodSettings = globalRules.flatMap((r) => {
    const throttle = { ThrottlingRateLimit: perSecond(r), ThrottlingBurstLimit: windowOf(design, r).burst };
    const note = oneLine(`${r.id}: ${failStatement(r, AWS_WHERE)}.`);
    // a stage-wide setting is still a bucket per method: no total across them (the design gives it)
    const perMethod = `${note} API Gateway applies this rate and burst to each method on its own, with no total across methods: the design's rule details give what they admit together, and how to cap it.`;
    if (r.routes.length === 0) return [{ ResourcePath: '/*', HttpMethod: '*', ...throttle, _rule: r.id, _note: perMethod }];
    return r.routes.flatMap((route) =>
      (route.methods ?? ['*']).map((m) => ({
        ResourcePath: methodSettingPath(apiGatewayPath(route.route)),
        HttpMethod: m,
        ...throttle,
        _rule: r.id,
        _note: note,
      })),
    );
  });
  // every API-key rule in one usage plan: a key joins one usage plan per stage
  const keyPlan = awsKeyPlan(design.rules);
  const byId = new Map(keyRules.map((r) => [r.id, r]));
  const bucket = (r: EdgeRule) => ({ RateLimit: perSecond(r), BurstLimit: windowOf(design, r).burst });
  const planRule = keyPlan.planLevel !== undefined ? byId.get(keyPlan.planLevel) : undefined;
  const methodThrottle = Object.fromEntries(
    [...keyPlan.methods].flatMap(([k, id]) => {
      const r = byId.get(id);
      return r ? [[k, bucket(r)]] : [];
    }),
  );
  const shippedKeyRules = keyRules.filter((r) => r === planRule || (keyPlan.keysOf.get(r.id) ?? []).length > 0);
  const keyRuleNote = (r: EdgeRule): string => {
    const w = windowOf(design, r);
    const keys = keyPlan.keysOf.get(r.id) ?? [];
    const where =
      r === planRule
        ? 'the Throttle of this plan: one token bucket per API key, which every method of the stage counts against'
        : `${keys.length === 1 ? 'a method throttle' : 'method throttles'} ${keys.join(', ')}: a token bucket per API key and method`;
    const missed = keyPlan.notCounted.get(r.id) ?? [];
    return oneLine(
      `${rateText(r.rate)}, burst ${w.burst}, as ${where}${missed.length > 0 ? `; not counted on ${missed.map((m) => `${m.method} ${m.route}`).join(', ')} (${[...new Set(missed.map((m) => m.holder))].join(', ')} holds the throttle there)` : ''}; ${failStatement(r, AWS_WHERE)}.`,
    );
  };
  const { throttle, waf } = awsAnswers(design);
  const throttleRetryAfter = Number(refusalHeader(throttle, 'Retry-After')?.value);
  const gatewayResponse = (
    type: (typeof AWS_429_RESPONSES)[number],
    answer: Pick<EdgeRefusal, 'headers' | 'body'>,
    note: string,
  ): Record<string, unknown> => ({
    Type: 'AWS::ApiGateway::GatewayResponse',
    Properties: {
      RestApiId: '<rest-api-id>',
      ResponseType: type,
      StatusCode: '429',
      // static header values are single-quoted
      ResponseParameters: Object.fromEntries(
        answer.headers.filter((h) => h.name !== 'Content-Type').map((h) => [`${GATEWAY_RESPONSE_HEADER}${h.name}`, staticParam(h.value)]),
      ),
      // API Gateway's own 429s come from its throttles (stage, usage plan), never from a WAF rule.
      // The template's `$` would be substituted: $ and # go as JSON \u escapes (apiGatewayTemplateJson)
      ResponseTemplates: { [refusalHeader(answer, 'Content-Type')?.value ?? AWS_CONTENT_TYPE]: apiGatewayTemplateJson(answer.body) },
    },
    _note: note,
  });
  const wafRetryAfter = refusalHeader(waf, 'Retry-After')?.value;
  // a WAF custom response body is sent as written, no template ("The payload of the custom
  // response", up to 10,240 characters: CustomResponseBody, AWS WAF API Reference)
  const body = JSON.stringify(waf.body);
  const scopeDowns = ipRules.map((r) => wafScopeDown(r, exemptRoutes(design)));
  const wafTotal = scopeDowns.reduce((n, st) => n + 2 + wafWcu(st), 0);
  // the stage and usage plan throttles match resource paths as spelled (the document says so too)
  const caseGap = edgeMatchingGap('aws-api-gateway', design.rules);
  // the WAF path patterns allow the stage (or a base path) in front of the route
  const wafPaths = wafPathNote('aws-api-gateway', design.rules);
  return {
    _comment: [
      `EXAMPLE TO ADAPT, generated by rl-design ${TOOL_VERSION} for ${oneLine(design.scope.projectName)}: AWS API Gateway has no config file to drop in.`,
      'Copy these CloudFormation property blocks into your templates (AWS::ApiGateway::Stage MethodSettings,',
      'AWS::ApiGateway::UsagePlan Throttle and ApiStages, AWS::WAFv2::WebACL Rules) and the AWS::ApiGateway::GatewayResponse',
      'resources (set RestApiId); remove every key that starts with "_".',
      'Each rule states its fail mode where it is configured (_note, _rules): API Gateway and AWS WAF keep the counts in',
      "AWS's own fleet, so no store of yours can fail; the stated mode is the one the rule keeps if its count moves to a shared store.",
      'Stage throttling (MethodSettings /* and *) is a token bucket per API method, not per client; per-IP limits need AWS WAF.',
      `Every throttle here sits under ${AWS_ACCOUNT_LIMIT_TEXT}.`,
      'API Gateway adds no rate-limit headers; the application emits the documented convention.',
      'WAF rules key on the address that connects to API Gateway (AggregateKeyType IP). FORWARDED_IP would take the',
      'first X-Forwarded-For entry, which the client writes: with a CDN in front, rate-limit at the CDN instead.',
      "API Gateway's own 429s (THROTTLED, QUOTA_EXCEEDED) carry no Retry-After unless a gateway response adds it:",
      'gatewayResponses below does (in OpenAPI, the same under x-amazon-apigateway-gateway-responses).',
      ...other.map(
        (r) => `${r.id}: keyed on ${r.identity ?? 'an unstated identity'}, not visible at the edge: enforce it in the middleware.`,
      ),
      'Kill switches (a change of the template, not a runtime flag):',
      ...rules
        .filter((r) => r.key !== 'unsupported' && killSwitchNote(design, r) !== undefined)
        .map((r) => oneLine(`${r.id} (${killSwitchNote(design, r)}).`)),
      ...(design.rollout.startsInShadow ? [oneLine(`Rollout step 1 (shadow): ${edgeShadowHow('aws-api-gateway')}.`)] : []),
      ...(ipRules.length > 0
        ? [
            'WAF scope-downs match a request as the middleware does: the method (GET also HEAD) and the path in any letter case',
            '(a LOWERCASE transformation on the URI path, against the route spelled in lower case); a rule over every endpoint leaves',
            'the exempt routes out. Capacity: an inline RegexMatchStatement per path costs 3 WCU, +10 for its LOWERCASE; a method 2',
            '(ByteMatchStatement EXACTLY) or, for GET with HEAD, 3 (RegexMatchStatement); a rate-based rule 2. A regex pattern set',
            'would cost 25 WCU per reference plus 10 for LOWERCASE, and each route needs its own pattern beside its own method.',
            `The rate-based rules here take ${wafTotal} WCU (a web ACL includes ${formatNumber(WAF_INCLUDED_WCU)} in its base price and holds at most ${formatNumber(WAF_MAX_WCU)});`,
            `their logical statements (And, Or, Not) nest at most ${Math.max(0, ...scopeDowns.map(wafDepth))} deep; CloudFormation and the WAF API state no depth limit, Terraform's typed statement blocks stop at 3 (use rule_json beyond).`,
          ]
        : []),
      ...(caseGap ? [`${caseGap}.`] : []),
      ...(wafPaths ? [`${wafPaths}.`] : []),
    ],
    gatewayResponses: [
      gatewayResponse(
        'THROTTLED',
        throttle,
        `Retry-After ${throttleRetryAfter} s: one token of the slowest API Gateway throttle here${[...globalRules, ...keyRules].length > 0 ? ` (${[...globalRules, ...keyRules].map((r) => `${r.id} ${rateText(r.rate)}`).join(', ')})` : ' (the account limit)'}.`,
      ),
      gatewayResponse(
        'QUOTA_EXCEEDED',
        gatewayAnswer(design, throttle.rules, QUOTA_RETRY_AFTER),
        `No usage plan here sets a Quota, so this fires only once you add one; a DAY quota resets at 00:00 UTC, so ${QUOTA_RETRY_AFTER} s is the longest wait. With a WEEK or MONTH quota, set the period's seconds.`,
      ),
    ],
    ...(methodSettings.length > 0 ? { stageMethodSettings: methodSettings } : {}),
    ...(shippedKeyRules.length > 0
      ? {
          usagePlans: [
            {
              UsagePlanName: awsUsagePlanName(design),
              Description: oneLine(`Edge rules keyed on the API key: ${shippedKeyRules.map((r) => r.id).join(', ')}`).slice(0, 500),
              ...(planRule ? { Throttle: bucket(planRule) } : {}),
              ApiStages: [
                {
                  ApiId: '<rest-api-id>',
                  Stage: '<stage>',
                  ...(Object.keys(methodThrottle).length > 0 ? { Throttle: methodThrottle } : {}),
                },
              ],
              _rules: Object.fromEntries(shippedKeyRules.map((r) => [r.id, keyRuleNote(r)])),
              _note: [
                `One usage plan for every rule keyed on the API key: an API key joins one usage plan per stage. Clients send their API key in the x-api-key header (API Gateway's own header; the design's edge header is ${API_KEY_HEADER}).`,
                'ApiStages[].Throttle keys are "<resource path>/<HTTP method>" (GET routes list HEAD too, as the stage settings do: drop the HEAD keys where your API defines no HEAD method); they assume one API Gateway resource per route, and behind a single {proxy+} resource API Gateway cannot tell the routes apart.',
              ],
            },
          ],
        }
      : {}),
    ...(ipRules.length > 0
      ? {
          wafRateBasedRules: ipRules.map((r, i) => {
            const w = windowOf(design, r);
            const scopeDown = scopeDowns[i];
            return {
              Name: gatewayName(`rl-${r.id}-${i + 1}`).replace(/[.~]/g, '_'),
              Priority: i + 1,
              Action: {
                Block: {
                  CustomResponse: {
                    ResponseCode: 429,
                    CustomResponseBodyKey: 'rl-too-many-requests',
                    ResponseHeaders: waf.headers.filter((h) => h.name !== 'Content-Type').map((h) => ({ Name: h.name, Value: h.value })),
                  },
                },
              },
              Statement: {
                RateBasedStatement: {
                  // the design's window: one WAF accepts (60, 120, 300 or 600 s; limit at least 10)
                  Limit: w.requests,
                  EvaluationWindowSec: w.periodSeconds,
                  // never FORWARDED_IP: WAF takes the first (client-written) X-Forwarded-For entry
                  AggregateKeyType: 'IP',
                  ...(scopeDown ? { ScopeDownStatement: scopeDown } : {}),
                },
              },
              VisibilityConfig: {
                SampledRequestsEnabled: true,
                CloudWatchMetricsEnabled: true,
                MetricName: wafMetricName(r.id),
              },
              _note: `${w.requests} per ${w.periodSeconds} s trailing window, no burst, applied near that figure (AWS says requests can come in above it for up to several minutes before WAF starts blocking); WAF blocks until it notices the rate over the window has fallen (usually within ${WAF_UNBLOCK_DELAY_SECONDS} s of the fall, AWS says), so Retry-After is ${wafRetryAfter} s. ${r.id}: ${failStatement(r, WAF_WHERE)}. ${wafCapacityText(scopeDown)}`,
            };
          }),
          wafCustomResponseBodies: {
            'rl-too-many-requests': {
              ContentType: WAF_CONTENT_TYPES[refusalHeader(waf, 'Content-Type')?.value ?? AWS_CONTENT_TYPE],
              Content: body,
            },
          },
        }
      : {}),
  };
}

/** No transformation: the method is compared as sent (HTTP methods are case-sensitive). */
const WAF_AS_SENT = (): Record<string, unknown>[] => [{ Priority: 0, Type: 'NONE' }];

/**
 * A route's path, matched in any letter case: the path lowercased (LOWERCASE, A-Z) against the
 * route's pattern spelled in lower case, as the middleware compares paths, after one optional
 * leading segment: the stage name on the default endpoint, a base path on a custom domain
 * (wafPathRegex; the file and the document say which paths WAF sees).
 */
function wafPathMatch(route: EdgeRoute): Record<string, unknown> {
  return {
    RegexMatchStatement: {
      RegexString: wafPathRegex(route.lowerPathRegex),
      FieldToMatch: { UriPath: {} },
      TextTransformations: [{ Priority: 0, Type: 'LOWERCASE' }],
    },
  };
}

/** A route's methods: one method an exact byte match (2 WCU), GET with HEAD one regex (3 WCU; an OR of two byte matches would cost 4 and nest a level deeper). */
function wafMethodMatch(methods: readonly string[]): Record<string, unknown> {
  if (methods.length === 1)
    return {
      ByteMatchStatement: {
        SearchString: methods[0] as string,
        FieldToMatch: { Method: {} },
        PositionalConstraint: 'EXACTLY',
        TextTransformations: WAF_AS_SENT(),
      },
    };
  return {
    RegexMatchStatement: {
      RegexString: `^(?:${methods.map(regexLiteral).join('|')})$`,
      FieldToMatch: { Method: {} },
      TextTransformations: WAF_AS_SENT(),
    },
  };
}

function wafAny(statements: Record<string, unknown>[]): Record<string, unknown> {
  return statements.length === 1 ? (statements[0] as Record<string, unknown>) : { OrStatement: { Statements: statements } };
}

function wafAll(statements: Record<string, unknown>[]): Record<string, unknown> {
  return statements.length === 1 ? (statements[0] as Record<string, unknown>) : { AndStatement: { Statements: statements } };
}

/**
 * The requests one route owns, as the middleware matches them: its methods (GET with HEAD; none
 * named for a route of any method) and its path in any letter case, less the requests of the
 * routes that own some of them (EdgeRoute.excluding), so a request counts under its own
 * endpoint's rules only. An excluded route that names fewer methods than this one leaves its
 * path out for those methods only.
 */
function wafRoute(route: EdgeRoute): Record<string, unknown> {
  const own = [...(route.methods ? [wafMethodMatch(route.methods)] : []), wafPathMatch(route)];
  if (route.excluding.length === 0) return wafAll(own);
  const covers = (e: EdgeRoute): boolean => e.methods === null || route.methods?.every((m) => e.methods?.includes(m)) === true;
  const left = route.excluding.map((e) => (covers(e) ? wafPathMatch(e) : wafAll([wafPathMatch(e), wafMethodMatch(e.methods ?? [])])));
  return wafAll([...own, { NotStatement: { Statement: wafAny(left) } }]);
}

/** A rate-based rule's scope-down: its routes, or, for a rule over every endpoint, every request but the exempt routes'. */
function wafScopeDown(r: EdgeRule, exempt: readonly EdgeRoute[]): Record<string, unknown> | undefined {
  if (r.routes.length > 0) return wafAny(r.routes.map(wafRoute));
  return exempt.length > 0 ? { NotStatement: { Statement: wafAny(exempt.map(wafRoute)) } } : undefined;
}

/** The published base WCU of a string match by its positional constraint. */
const WAF_BYTE_MATCH_WCU: Readonly<Record<string, number>> = { EXACTLY: 2, STARTS_WITH: 2, ENDS_WITH: 2, CONTAINS: 10, CONTAINS_WORD: 10 };

/**
 * The web ACL capacity units (WCU) a statement costs, by AWS WAF's published figures for the
 * statements this file writes: a logical statement what its statements cost, a regex match 3, a
 * string match 2 (exact, prefix, suffix) or 10, each text transformation but NONE 10 more, a
 * rate-based rule 2 and its scope-down.
 */
export function wafWcu(st: any): number {
  if (!st || typeof st !== 'object') return 0;
  const transforms = (x: any): number =>
    10 * ((Array.isArray(x?.TextTransformations) ? x.TextTransformations : []) as any[]).filter((t) => t?.Type !== 'NONE').length;
  if (st.RateBasedStatement) return 2 + wafWcu(st.RateBasedStatement.ScopeDownStatement);
  if (st.AndStatement || st.OrStatement)
    return ((st.AndStatement ?? st.OrStatement).Statements as any[]).reduce((n: number, x) => n + wafWcu(x), 0);
  if (st.NotStatement) return wafWcu(st.NotStatement.Statement);
  if (st.RegexMatchStatement) return 3 + transforms(st.RegexMatchStatement);
  if (st.ByteMatchStatement)
    return (WAF_BYTE_MATCH_WCU[st.ByteMatchStatement.PositionalConstraint] ?? 10) + transforms(st.ByteMatchStatement);
  return 0;
}

/** How many logical statements (And, Or, Not) deep a statement nests. */
export function wafDepth(st: any): number {
  if (!st || typeof st !== 'object') return 0;
  if (st.AndStatement || st.OrStatement) return 1 + Math.max(0, ...((st.AndStatement ?? st.OrStatement).Statements as any[]).map(wafDepth));
  if (st.NotStatement) return 1 + wafDepth(st.NotStatement.Statement);
  return 0;
}

/** What one rate-based rule's statement costs and how deep it nests, as its _note states it. */
function wafCapacityText(scopeDown: Record<string, unknown> | undefined): string {
  return `Capacity: ${2 + wafWcu(scopeDown)} WCU (the rate-based rule 2, its scope-down ${wafWcu(scopeDown)}); logical statements nested ${wafDepth(scopeDown)} deep.`;
}

/** The WCU a web ACL includes in its base price, and the most one can hold (AWS WAF's published quotas). */
const WAF_INCLUDED_WCU = 1500;
const WAF_MAX_WCU = 5000;

export { CF_PERIODS };
/** Mitigation timeouts (block durations), in seconds, that rate limiting rules accept (0 is throttling, Enterprise only). */
export const CF_MITIGATION_TIMEOUTS = [10, 60, 120, 300, 600, 3600, 86400];

/*
 * Expressions in Cloudflare's Rules language, as its published reference states them (the
 * ruleset engine's operators and functions pages, and the rate limiting rules' availability by
 * plan, in the public cloudflare/cloudflare-docs repository): `eq` compares one string and `in`
 * tests membership of a set of space-separated quoted strings, `{"/a" "/b"}`, on every plan;
 * `matches` (a Rust regular expression) needs a Business or Enterprise plan; string comparison
 * is case sensitive, and `lower()` lowercases a field's ASCII letters. In a rate limiting
 * rule's expression the Free and Pro plans offer the path field (Pro adds host, URI and query),
 * Business adds the method; counting on a request header needs Enterprise with Advanced Rate
 * Limiting; the period may be 10 s on Free, up to 60 s on Pro, up to 600 s on Business, longer
 * on Enterprise; the mitigation timeout 10 s on Free, up to an hour on Pro, up to a day above;
 * a zone holds 1 rule on Free, 2 on Pro, 5 on Business.
 */

/** The path field as static routes compare it: lowercased, so /V1/Orders counts as the regex's (?i) counted it. */
const CF_LOWER_PATH = 'lower(http.request.uri.path)';
const CF_PATH = 'http.request.uri.path';

/** The paths a static route's requests arrive on, lowercased: the route, and with a trailing slash (as pathRegex allows it). */
export function cfStaticPaths(route: EdgeRoute): string[] {
  const p = route.route.length > 1 && route.route.endsWith('/') ? route.route.slice(0, -1) : route.route;
  // the path as normalization hands it to the rule (a space as %20); lower() converts ASCII
  // letters only, so only those are lowercased here
  const lower = asciiLower(cfNormalizedPath(p));
  return lower === '/' || lower === '' ? ['/'] : [lower, `${lower}/`];
}

/** `lower(path) eq "/a"` for one path, `lower(path) in {"/a" "/a/"}` for several. */
function cfPathSet(paths: readonly string[]): string {
  return paths.length === 1
    ? `${CF_LOWER_PATH} eq ${cfString(paths[0] as string)}`
    : `${CF_LOWER_PATH} in {${paths.map(cfString).join(' ')}}`;
}

const methodKey = (route: EdgeRoute): string => (route.methods ? route.methods.join(' ') : '');

/**
 * A rule's routes as one expression: the static routes with the same methods in one `eq`/`in`
 * comparison of the path (every plan), each parameterised route as a `matches` (Business and
 * above); a method condition where the route names methods. A route that other endpoints take
 * some requests from (EdgeRoute.excluding: /parts/search from /parts/:sku) leaves theirs out
 * with `and not (...)`, so each request counts under its own endpoint's rules.
 */
export function cfRoutesExpr(routes: readonly EdgeRoute[]): string {
  const parts: string[] = [];
  const staticByMethods = new Map<string, { methods: string[] | null; paths: string[] }>();
  for (const route of routes) {
    if (!route.literal || route.excluding.length > 0) continue;
    const group = staticByMethods.get(methodKey(route)) ?? { methods: route.methods, paths: [] };
    for (const p of cfStaticPaths(route)) if (!group.paths.includes(p)) group.paths.push(p);
    staticByMethods.set(methodKey(route), group);
  }
  const withMethods = (methods: string[] | null, path: string): string =>
    methods ? `(http.request.method in {${methods.map(cfString).join(' ')}} and ${path})` : `(${path})`;
  const but = (route: EdgeRoute): string => (route.excluding.length > 0 ? ` and not (${cfRoutesExpr(route.excluding)})` : '');
  for (const g of staticByMethods.values()) parts.push(withMethods(g.methods, cfPathSet(g.paths)));
  for (const route of routes.filter((r) => r.literal && r.excluding.length > 0)) {
    parts.push(withMethods(route.methods, `${cfPathSet(cfStaticPaths(route))}${but(route)}`));
  }
  for (const route of routes.filter((r) => !r.literal)) {
    parts.push(
      withMethods(route.methods, `${CF_PATH} matches ${cfString(`(?i)^${routeBody(route.route, cfNormalizedPath)}$`)}${but(route)}`),
    );
  }
  return parts.join(' or ');
}

/** The expression of one rate limiting rule: its routes, else every request but the exempt routes. */
export function cfRuleExpression(r: Pick<EdgeRule, 'routes'>, exempt: readonly EdgeRoute[]): string {
  if (r.routes.length > 0) return cfRoutesExpr(r.routes);
  return exempt.length > 0 ? `not (${cfRoutesExpr(exempt)})` : 'true';
}

const CF_PLANS = ['Free', 'Pro', 'Business', 'Enterprise'] as const;
type CfPlan = (typeof CF_PLANS)[number];
const higher = (a: CfPlan, b: CfPlan): CfPlan => (CF_PLANS.indexOf(a) >= CF_PLANS.indexOf(b) ? a : b);

/** The lowest plan a rule runs on, and what in it asks for more than Free. */
export function cfRulePlan(rule: { expression: string; characteristics: readonly string[]; period: number; mitigation: number }): {
  plan: CfPlan;
  needs: string[];
} {
  const needs: [CfPlan, string][] = [];
  if (/\bmatches\b/.test(rule.expression)) needs.push(['Business', 'a regular expression (matches) for its routes with parameters']);
  if (rule.expression.includes('http.request.method')) needs.push(['Business', 'the request method in its expression']);
  if (rule.characteristics.some((c) => c.startsWith('http.request.headers'))) {
    needs.push(['Enterprise', 'counting per request header (Enterprise with Advanced Rate Limiting)']);
  }
  const period: CfPlan = rule.period <= 10 ? 'Free' : rule.period <= 60 ? 'Pro' : rule.period <= 600 ? 'Business' : 'Enterprise';
  if (period !== 'Free') needs.push([period, `a ${rule.period} s period`]);
  const timeout: CfPlan = rule.mitigation <= 10 ? 'Free' : rule.mitigation <= 3600 ? 'Pro' : 'Business';
  if (timeout !== 'Free') needs.push([timeout, `a ${rule.mitigation} s mitigation timeout`]);
  return { plan: needs.reduce<CfPlan>((p, [n]) => higher(p, n), 'Free'), needs: needs.map(([p, t]) => `${t} (${p})`) };
}

/** How many rate limiting rules a zone holds on each plan. */
const CF_RULES_PER_PLAN: Readonly<Record<CfPlan, number>> = { Free: 1, Pro: 2, Business: 5, Enterprise: 100 };

/** A rule's description: its id, title, fail mode (section 2.2's words) and kill switch, at most 500 characters. */
function cloudflareDescription(design: Design, r: EdgeRule): string {
  const tail = oneLine(
    `; ${failStatement(r, 'Cloudflare counts it in each data centre')}${killSwitchNote(design, r) ? ` (${killSwitchNote(design, r)})` : ''}`,
  );
  const head = oneLine(`${r.id}: ${r.title}`);
  return head.length + tail.length <= 500 ? `${head}${tail}` : `${head.slice(0, Math.max(r.id.length + 2, 500 - tail.length))}${tail}`;
}

/**
 * The 429 of the Cloudflare file's rules (each rule's custom response is the same): the block
 * lasts the mitigation timeout, the shortest Cloudflare offers that covers the longest wait. The
 * rule's response carries the Content-Type and body; Cloudflare itself sets Retry-After, to the
 * seconds left of the block, which no field of the rule can set.
 */
function cloudflareAnswer(design: Design): { rules: EdgeRule[]; mitigation: number; refusal: EdgeRefusal } {
  const rules = edgeRules(design).filter((r) => r.key !== 'unsupported');
  const mitigation = CF_MITIGATION_TIMEOUTS.find((t) => t >= edgeRetryAfter(rules)) ?? 86400;
  return {
    rules,
    mitigation,
    refusal: {
      by: "Cloudflare's rate limiting rule (its block action, with a custom response)",
      writtenBy: 'cloudflare-rule-response',
      ruleIds: rules.map((r) => r.id),
      headers: [
        { name: 'Content-Type', value: CLOUDFLARE_CONTENT_TYPE },
        {
          name: 'Retry-After',
          value: `<seconds left of the ${mitigation} s block>`,
          byGateway: 'Cloudflare sets it on a blocking rate limiting rule: the seconds until the mitigation ends',
        },
      ],
      body: edgeProblemBody(design, rules, mitigation),
      notes: [
        'Cloudflare offers no problem+json type for a custom response: the problem shape is served as application/json.',
        `Cloudflare writes Retry-After itself, counting down the ${mitigation} s block (the mitigation timeout) that the first refusal starts; the body's retryAfterSeconds is the whole block.`,
      ],
    },
  };
}

/** The 429 the Cloudflare file answers for the design's edge rules (none without one). */
export function cloudflareEdgeRefusals(design: Design): EdgeRefusal[] {
  const { rules, refusal } = cloudflareAnswer(design);
  return rules.length > 0 ? [refusal] : [];
}

/** The JSON example for Cloudflare, as data (exported for tests). */
export function cloudflareConfig(design: Design): Record<string, unknown> {
  const { rules, mitigation, refusal } = cloudflareAnswer(design);
  const exempt = exemptRoutes(design);
  // a rate limiting rule's custom response body is sent as written: no template reads it (error
  // tokens belong to custom error assets only), at most 30 KB (cloudflare-docs,
  // custom-response-blocked-requests for rate limiting rules)
  const content = JSON.stringify(refusal.body);
  const shipped = rules.map((r) => {
    const w = windowOf(design, r);
    const expression = cfRuleExpression(r, exempt);
    const characteristics =
      r.key === 'ip'
        ? ['ip.src', 'cf.colo.id']
        : r.key === 'api-key'
          ? [`http.request.headers["${API_KEY_HEADER}"]`, 'cf.colo.id']
          : ['cf.colo.id'];
    const plan = cfRulePlan({ expression, characteristics, period: w.periodSeconds, mitigation });
    return {
      id: r.id,
      plan,
      rule: {
        // the rule's kill switch, as the document's rollout section states it
        // its fail mode and its kill switch kept whole, the title shortened to fit 500 characters
        description: cloudflareDescription(design, r),
        expression,
        action: 'block',
        // application/problem+json is not among the content types Cloudflare accepts for a rule's
        // custom response (application/json, text/html, text/plain, text/xml): the body stays
        // problem-shaped and is served as application/json
        action_parameters: { response: { status_code: 429, content_type: refusalHeader(refusal, 'Content-Type')?.value, content } },
        ratelimit: {
          characteristics,
          // the design's window: a period Cloudflare accepts, any stated burst folded into its count
          period: w.periodSeconds,
          requests_per_period: w.requests,
          mitigation_timeout: mitigation,
        },
        enabled: true,
      },
    };
  });
  const zonePlan = shipped.reduce<CfPlan>((p, x) => higher(p, x.plan.plan), 'Free');
  const countPlan = CF_PLANS.find((p) => CF_RULES_PER_PLAN[p] >= shipped.length) ?? 'Enterprise';
  return {
    _comment: [
      `EXAMPLE TO ADAPT, generated by rl-design ${TOOL_VERSION} for ${oneLine(design.scope.projectName)}: Cloudflare rate limiting rules.`,
      'PUT the rules to the zone entry point ruleset of phase http_ratelimit (Rulesets API), or recreate them',
      'in the dashboard; remove every key that starts with "_".',
      'Plans: static routes compare the path with "eq" or "in", which every plan offers; "matches" (regex, for',
      'routes with parameters) and the request method in an expression need Business or Enterprise.',
      ...shipped.map((x) =>
        oneLine(
          `${x.id}: ${x.plan.plan} plan or above${x.plan.needs.length > 0 ? `, for ${x.plan.needs.join(', ')}` : ' (the path only, a 10 s period)'}.`,
        ),
      ),
      `${shipped.length === 1 ? "The file's one rule" : `All ${shipped.length} rules together`}: ${higher(zonePlan, countPlan)} plan or above (a zone holds 1 rate limiting rule on Free, 2 on Pro, 5 on Business).`,
      'Counters are per Cloudflare data centre (cf.colo.id), so the ceiling is one counter per location.',
      'A blocking rate limiting rule answers with Retry-After set by Cloudflare (the seconds until the mitigation',
      'ends); keep the action "block" so it does. The custom body is problem+json in shape but is served as',
      'application/json: Cloudflare accepts only application/json, text/html, text/plain or text/xml there.',
      ...edgeRules(design)
        .filter((r) => r.key === 'unsupported')
        .map((r) => `${r.id}: keyed on ${r.identity ?? 'an unstated identity'}, not visible at the edge: enforce it in the middleware.`),
      ...(design.rollout.startsInShadow ? [oneLine(`Rollout step 1 (shadow): ${edgeShadowHow('cloudflare')}.`)] : []),
    ],
    phase: 'http_ratelimit',
    rules: shipped.map((x) => x.rule),
  };
}

export function generateAws(design: Design): CodeFile[] {
  return [
    {
      path: AWS_PATH,
      language: 'json',
      content: json(awsConfig(design)),
      description: 'Example to adapt: API Gateway stage throttling and usage plans, AWS WAF rate-based rules for per-IP limits',
    },
  ];
}

export function generateCloudflare(design: Design): CodeFile[] {
  return [
    {
      path: CLOUDFLARE_PATH,
      language: 'json',
      content: json(cloudflareConfig(design)),
      description: 'Example to adapt: Cloudflare rate limiting rules (Rulesets API, phase http_ratelimit)',
    },
  ];
}

function parseJson(f: CodeFile): any {
  try {
    return JSON.parse(f.content);
  } catch {
    return undefined;
  }
}

const positiveSeconds = (v: unknown): boolean => /^[1-9]\d*$/.test(String(v));

/**
 * API Gateway answers 429 from its throttling (always possible: the account limit applies to
 * every API) and from usage plan quotas; WAF from each rate-based rule. One finding per layer
 * whose 429 would go out without a positive Retry-After.
 */
export function awsRetryAfterFindings(files: CodeFile[]): RetryAfterFinding[] {
  const out: RetryAfterFinding[] = [];
  for (const f of files.filter((x) => x.path === AWS_PATH)) {
    const doc = parseJson(f);
    if (!doc) {
      out.push({ file: f.path, layer: 'aws', missing: 'readable JSON' });
      continue;
    }
    const responses: any[] = Array.isArray(doc.gatewayResponses) ? doc.gatewayResponses : [];
    const needed: string[] = ['THROTTLED', ...(Array.isArray(doc.usagePlans) && doc.usagePlans.length > 0 ? ['QUOTA_EXCEEDED'] : [])];
    for (const type of needed) {
      const r = responses.find((x) => x?.Properties?.ResponseType === type);
      const value = String(r?.Properties?.ResponseParameters?.[RETRY_AFTER_PARAM] ?? '');
      if (!r || !/^'[1-9]\d*'$/.test(value)) {
        out.push({ file: f.path, layer: `aws api-gateway ${type}`, missing: `a gateway response for ${type} that adds Retry-After` });
      } else if (String(r.Properties.StatusCode) !== '429') {
        out.push({ file: f.path, layer: `aws api-gateway ${type}`, missing: 'status 429' });
      }
    }
    for (const rule of Array.isArray(doc.wafRateBasedRules) ? doc.wafRateBasedRules : []) {
      const custom = rule?.Action?.Block?.CustomResponse;
      const header = (custom?.ResponseHeaders ?? []).find((h: any) => String(h?.Name).toLowerCase() === 'retry-after');
      if (!header || !positiveSeconds(header.Value)) {
        out.push({ file: f.path, layer: `aws waf ${rule?.Name ?? ''}`.trim(), missing: 'Retry-After in the block custom response' });
      }
    }
  }
  return out;
}

/**
 * Cloudflare sets Retry-After itself on a blocking rate limiting rule's response (the seconds
 * until the mitigation ends); the file cannot add headers there. So every rule must block
 * with status 429 and a content type Cloudflare accepts.
 */
export function cloudflareRetryAfterFindings(files: CodeFile[]): RetryAfterFinding[] {
  const out: RetryAfterFinding[] = [];
  for (const f of files.filter((x) => x.path === CLOUDFLARE_PATH)) {
    const doc = parseJson(f);
    if (!doc) {
      out.push({ file: f.path, layer: 'cloudflare', missing: 'readable JSON' });
      continue;
    }
    for (const rule of Array.isArray(doc.rules) ? doc.rules : []) {
      const layer = `cloudflare rule ${String(rule?.description ?? '').split(':')[0]}`.trim();
      const response = rule?.action_parameters?.response;
      if (rule?.action !== 'block')
        out.push({ file: f.path, layer, missing: 'Retry-After (Cloudflare sends it only for the block action)' });
      if (response?.status_code !== 429) out.push({ file: f.path, layer, missing: 'status 429' });
      if (response && !(CLOUDFLARE_CONTENT_TYPES as readonly string[]).includes(response.content_type)) {
        out.push({ file: f.path, layer, missing: `a content type Cloudflare accepts (${CLOUDFLARE_CONTENT_TYPES.join(', ')})` });
      }
    }
  }
  return out;
}
