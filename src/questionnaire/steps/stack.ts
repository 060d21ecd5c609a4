/**
 * Phase 1 item 2: language, framework, topology and instances, gateway, store and the
 * proxies trusted to name the client IP. Critical: the framework, topology, gateway and
 * store questions offer "don't know" and are asked once more with examples; a second
 * "don't know" on the framework records `unknown: ['stack']` (generic design) and the
 * remaining stack questions are not asked. Detected values are shown and, once confirmed,
 * not asked again.
 */
import { FRAMEWORKS, GATEWAYS, STORES, type AnswersInput } from '../../answers/schema.js';
import { askTwice, describeDetected, DONT_KNOW_NAME, UNKNOWN, type Step, type StepContext, type Unknown } from '../context.js';
import type { Flag } from '../flags.js';
import { must, parseCidrList, parseNumber, validatorOf } from '../parse.js';
import type { PromptChoice } from '../prompt.js';
import { Stack } from '../../answers/schema.js';

type Framework = (typeof FRAMEWORKS)[number];
type Gateway = (typeof GATEWAYS)[number];
type Store = (typeof STORES)[number];
type Topology = 'single' | 'horizontal';
type StackInput = NonNullable<AnswersInput['stack']>;

const dontKnow = { value: UNKNOWN, name: DONT_KNOW_NAME } as const;

const FRAMEWORK_CHOICES: PromptChoice<Framework | Unknown>[] = [
  { value: 'express', name: 'Express' },
  { value: 'fastify', name: 'Fastify' },
  { value: 'koa', name: 'Koa' },
  { value: 'hono', name: 'Hono' },
  { value: 'nestjs', name: 'NestJS' },
  { value: 'other', name: 'Other', description: 'Another framework or language (Django, Spring Boot, Go net/http, Rails...).' },
  dontKnow,
];

const TOPOLOGY_CHOICES: PromptChoice<Topology | Unknown>[] = [
  { value: 'single', name: 'One instance', description: 'One process, VM or container serves all traffic.' },
  { value: 'horizontal', name: 'Several instances', description: 'Replicas behind a load balancer; limits must live in a shared store.' },
  dontKnow,
];

const GATEWAY_CHOICES: PromptChoice<Gateway | Unknown>[] = [
  { value: 'nginx', name: 'nginx' },
  { value: 'envoy', name: 'Envoy', description: 'Also Istio and other Envoy-based meshes.' },
  { value: 'kong', name: 'Kong' },
  { value: 'aws-api-gateway', name: 'AWS API Gateway' },
  { value: 'cloudflare', name: 'Cloudflare' },
  { value: 'none', name: 'None', description: 'Clients reach the application directly (a plain load balancer counts as none).' },
  dontKnow,
];

const STORE_CHOICES: PromptChoice<Store | Unknown>[] = [
  { value: 'redis', name: 'Redis' },
  { value: 'redis-cluster', name: 'Redis Cluster' },
  { value: 'valkey', name: 'Valkey' },
  { value: 'none', name: 'None', description: 'No shared store today.' },
  dontKnow,
];

export const STACK_EXAMPLES = {
  framework: [
    'Examples, to help decide:',
    '  - package.json lists "express" -> Express; "fastify" -> Fastify; "@nestjs/core" -> NestJS',
    '  - the API is Python (Django, FastAPI), Java (Spring Boot), Go or Ruby -> Other',
  ],
  topology: [
    'Examples, to help decide:',
    '  - a Kubernetes Deployment with replicas: 3, an autoscaling group, PM2 cluster mode -> several instances',
    '  - one VM, one container, one long-running process                              -> one instance',
  ],
  gateway: [
    'Examples, to help decide:',
    '  - an nginx.conf with proxy_pass in front of the app -> nginx; an Istio sidecar -> Envoy',
    '  - requests arrive through AWS API Gateway, Kong routes or a Cloudflare proxy -> pick that one',
    '  - only a cloud load balancer, or nothing                                    -> None',
  ],
  store: [
    'Examples, to help decide:',
    '  - REDIS_URL in the environment, ElastiCache or Memorystore, ioredis/redis in package.json -> Redis',
    '  - a Redis with several shards (cluster mode enabled)                                    -> Redis Cluster',
  ],
} as const;

const NODE_FRAMEWORKS: readonly Framework[] = ['express', 'fastify', 'koa', 'hono', 'nestjs'];

/** select + "don't know", asked at most twice, the second time after examples. */
function selectTwice<T>(ctx: StepContext, first: string, second: string, examples: readonly string[], choices: PromptChoice<T | Unknown>[], def?: T): Promise<T | Unknown> {
  return askTwice<T>(async (attempt) => {
    if (attempt === 2) for (const line of examples) ctx.say(line);
    return ctx.prompt.select<T | Unknown>({
      message: attempt === 1 ? first : `Asking once more: ${second}`,
      choices,
      ...(def !== undefined ? { default: def } : {}),
    });
  });
}

export const stack: Step = {
  id: 'stack',
  item: 2,
  async run(ctx) {
    const f = ctx.flags;
    const det: StackInput = ctx.detected.answers.stack ?? {};
    const flagOf: Record<keyof StackInput, Flag<unknown>> = {
      language: f.language,
      framework: f.framework,
      topology: f.topology,
      instances: f.instances,
      gateway: f.gateway,
      store: f.store,
      trustedProxies: f.trustedProxies,
    };
    const LABELS: Record<keyof StackInput, string> = {
      language: 'language',
      framework: 'framework',
      topology: 'topology',
      instances: 'instances',
      gateway: 'gateway',
      store: 'store',
      trustedProxies: 'trusted proxies',
    };
    const usable = (Object.keys(det) as (keyof StackInput)[]).filter((k) => det[k] !== undefined && flagOf[k] === undefined);

    // Detected facts answer their questions once the person confirms them (always, without a TTY).
    let useDetected = true;
    if (ctx.interactive && usable.length > 0) {
      const list = usable.map((k) => describeDetected(ctx.detected, `stack.${k}`, LABELS[k], det[k])).join(', ');
      useDetected = await ctx.prompt.confirm({ message: `Keep what was found for the stack: ${list}?`, default: true });
    }
    let askMore = ctx.interactive;
    const known = <T>(flag: Flag<T>, detected: T | undefined): T | Unknown | undefined => {
      if (flag !== undefined) return flag;
      if (detected !== undefined && useDetected) return detected;
      return undefined;
    };
    const out: StackInput = {};
    let unknownStack = false;

    // Framework: the critical one.
    let framework = known(f.framework, det.framework);
    if (framework === undefined && askMore) {
      framework = await selectTwice<Framework>(
        ctx,
        'Which web framework serves the API?',
        'which web framework serves the API?',
        STACK_EXAMPLES.framework,
        FRAMEWORK_CHOICES,
        det.framework,
      );
    }
    if (framework === UNKNOWN) {
      unknownStack = true;
      askMore = false;
    } else if (framework !== undefined) {
      out.framework = framework;
    }

    // Language.
    let language = known(f.language, det.language);
    if (language === undefined && askMore) {
      if (framework === 'other') {
        const text = await ctx.prompt.input({
          message: 'Which language is the API written in? (e.g. Go, Python, Java; empty if unsure)',
          ...(det.language ? { default: det.language } : {}),
        });
        language = text === '' ? UNKNOWN : text.slice(0, 60);
      } else if (out.framework !== undefined && NODE_FRAMEWORKS.includes(out.framework)) {
        language = await ctx.prompt.select<string>({
          message: 'TypeScript or JavaScript?',
          choices: [{ value: 'TypeScript', name: 'TypeScript' }, { value: 'JavaScript', name: 'JavaScript' }, dontKnow],
          ...(det.language ? { default: det.language } : {}),
        });
      }
    }
    if (language !== undefined && language !== UNKNOWN) out.language = language;

    // Topology and instances.
    let topology = known(f.topology, undefined);
    if (topology === undefined && typeof f.instances === 'number') topology = f.instances > 1 ? 'horizontal' : 'single';
    if (topology === undefined && askMore) {
      topology = await selectTwice<Topology>(
        ctx,
        'How does the API run in production?',
        'does the API run as one instance or several?',
        STACK_EXAMPLES.topology,
        TOPOLOGY_CHOICES,
      );
    }
    if (topology !== undefined && topology !== UNKNOWN) out.topology = topology;
    let instances = known(f.instances, undefined);
    if (instances === undefined && askMore && topology === 'horizontal') {
      const text = await ctx.prompt.input({
        message: 'How many instances at peak? (e.g. 6; empty if unsure)',
        validate: validatorOf((t) => parseNumber(t, Stack.shape.instances, '6'), true),
      });
      instances = text === '' ? UNKNOWN : must(parseNumber(text, Stack.shape.instances, '6'));
    }
    if (instances !== undefined && instances !== UNKNOWN) out.instances = instances;

    // Gateway.
    let gateway = known(f.gateway, det.gateway);
    if (gateway === undefined && askMore) {
      gateway = await selectTwice<Gateway>(
        ctx,
        'Is there an API gateway or reverse proxy in front of the API?',
        'is there an API gateway or reverse proxy in front of the API?',
        STACK_EXAMPLES.gateway,
        GATEWAY_CHOICES,
        det.gateway,
      );
    }
    if (gateway !== undefined && gateway !== UNKNOWN) out.gateway = gateway;

    // Store.
    let store = known(f.store, det.store);
    if (store === undefined && askMore) {
      store = await selectTwice<Store>(
        ctx,
        'Is Redis (or a compatible store) available for limiter state?',
        'is Redis (or a compatible store) available?',
        STACK_EXAMPLES.store,
        STORE_CHOICES,
        det.store,
      );
    }
    if (store !== undefined && store !== UNKNOWN) out.store = store;

    // Trusted proxies: only meaningful behind a proxy.
    let proxies = known(f.trustedProxies, det.trustedProxies);
    if (proxies === undefined && askMore && out.gateway !== undefined && out.gateway !== 'none') {
      const text = await ctx.prompt.input({
        message: `Address ranges your ${out.gateway} tier sends from (trusted to name the client IP), e.g. 10.0.0.0/8, 192.168.0.0/16; empty if unsure:`,
        ...(det.trustedProxies ? { default: det.trustedProxies.join(', ') } : {}),
        validate: validatorOf(parseCidrList, true),
      });
      proxies = text === '' ? UNKNOWN : must(parseCidrList(text));
    }
    if (proxies !== undefined && proxies !== UNKNOWN) out.trustedProxies = proxies;

    return {
      ...(Object.keys(out).length > 0 ? { stack: out } : {}),
      ...(unknownStack ? { unknown: ['stack' as const] } : {}),
    };
  },
};
