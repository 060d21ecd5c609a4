/**
 * Design question 2: language, framework, topology and instances, gateway, store and the
 * proxies trusted to name the client IP. Critical: the framework, topology, gateway and
 * store questions offer "don't know" and are asked once more with examples; a second
 * "don't know" on the framework records `unknown: ['stack']` (generic design) and the
 * remaining stack questions are not asked. Known values (previous answers, detected facts)
 * are shown with their source and, once confirmed, not asked again; when some are previous
 * answers, confirming them finishes the step (what they left open was left open then).
 * Rejected, each question offers its known value as the default.
 */
import type { FRAMEWORKS, GATEWAYS, STORES, AnswersInput } from '../../answers/schema.js';
import {
  askTwice,
  defaultNote,
  DONT_KNOW_NAME,
  emptyHint,
  fromPrevious,
  isUnknownText,
  keepKnown,
  previousUnknown,
  shownValue,
  UNKNOWN,
  type KnownItem,
  type Step,
  type StepContext,
  type Unknown,
} from '../context.js';
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

/** select + "don't know", asked at most twice, the second time after examples; `def` is the known value. */
function selectTwice<T>(
  ctx: StepContext,
  first: string,
  second: string,
  examples: readonly string[],
  choices: PromptChoice<T | Unknown>[],
  def?: T | Unknown,
): Promise<T | Unknown> {
  return askTwice<T>(async (attempt) => {
    if (attempt === 2) for (const line of examples) ctx.say(line);
    return ctx.prompt.select<T | Unknown>({
      message: attempt === 1 ? first : `Asking once more: ${second}`,
      choices,
      // A "don't know" default is not offered again on the second ask.
      ...(def !== undefined && !(attempt === 2 && def === UNKNOWN) ? { default: def } : {}),
    });
  });
}

type StackKey = keyof StackInput;
const KEYS: readonly StackKey[] = ['framework', 'language', 'topology', 'instances', 'gateway', 'store', 'trustedProxies'];
const LABELS: Record<StackKey, string> = {
  language: 'language',
  framework: 'framework',
  topology: 'topology',
  instances: 'instances',
  gateway: 'gateway',
  store: 'store',
  trustedProxies: 'trusted proxies',
};

export const stack: Step = {
  id: 'stack',
  item: 2,
  fields: [...KEYS.map((k) => `stack.${k}`), 'unknown'],
  async run(ctx) {
    const f = ctx.flags;
    const flagOf: Record<StackKey, Flag<unknown>> = {
      language: f.language,
      framework: f.framework,
      topology: f.topology,
      instances: f.instances,
      gateway: f.gateway,
      store: f.store,
      trustedProxies: f.trustedProxies,
    };
    // What is known per field (previous answer over detected fact). A previous "don't know"
    // on the stack (generic design) is known too: it wins over every detected stack fact,
    // unless a --framework flag answers it now.
    const frameworkUnknown = previousUnknown(ctx.known, 'stack') && !fromPrevious(ctx.known, 'stack.framework');
    const all: StackInput = ctx.known.answers.stack ?? {};
    const det: StackInput =
      frameworkUnknown && f.framework === undefined
        ? Object.fromEntries(Object.entries(all).filter(([k]) => fromPrevious(ctx.known, `stack.${k}`)))
        : all;
    const knownOf: Omit<StackInput, 'framework'> & { framework?: Framework | Unknown } = {
      ...det,
      framework: frameworkUnknown ? UNKNOWN : det.framework,
    };
    const fieldOf = (k: StackKey): string => (k === 'framework' && frameworkUnknown ? 'unknown' : `stack.${k}`);
    const note = (k: StackKey, value: unknown): string =>
      value === undefined ? '' : defaultNote(ctx.known, fieldOf(k), shownValue(value));
    const usable = KEYS.filter((k) => knownOf[k] !== undefined && flagOf[k] === undefined);

    // Known values answer their questions once the person confirms them (always, without a TTY).
    const items: KnownItem[] = usable.map((k) => ({ field: fieldOf(k), label: LABELS[k], value: knownOf[k] }));
    const { kept, finished } = await keepKnown(ctx, (list) => `Keep what was found for the stack: ${list}?`, items);
    const useKnown = !ctx.interactive || kept;
    let askMore = ctx.interactive && !finished;
    const known = <T>(flag: Flag<T>, value: T | Unknown | undefined): T | Unknown | undefined => {
      if (flag !== undefined) return flag;
      if (value !== undefined && useKnown) return value;
      return undefined;
    };
    const out: StackInput = {};
    let unknownStack = false;

    // Framework: the critical one.
    let framework = known(f.framework, knownOf.framework);
    if (framework === undefined && askMore) {
      framework = await selectTwice<Framework>(
        ctx,
        `Which web framework serves the API?${note('framework', knownOf.framework)}`,
        'which web framework serves the API?',
        STACK_EXAMPLES.framework,
        FRAMEWORK_CHOICES,
        knownOf.framework,
      );
    }
    if (framework === UNKNOWN) {
      unknownStack = true;
      askMore = false;
    } else if (framework !== undefined) {
      out.framework = framework;
    }

    // Language.
    let language = known(f.language, knownOf.language);
    if (language === undefined && askMore) {
      if (framework === 'other') {
        const text = await ctx.prompt.input({
          message: `Which language is the API written in? (e.g. Go, Python, Java; ${emptyHint(!!knownOf.language)})${knownOf.language ? defaultNote(ctx.known, 'stack.language') : ''}`,
          ...(knownOf.language ? { default: knownOf.language } : {}),
        });
        language = text === '' || isUnknownText(text) ? UNKNOWN : text.slice(0, 60);
      } else if (out.framework !== undefined && NODE_FRAMEWORKS.includes(out.framework)) {
        language = await ctx.prompt.select<string>({
          message: `TypeScript or JavaScript?${note('language', knownOf.language)}`,
          choices: [{ value: 'TypeScript', name: 'TypeScript' }, { value: 'JavaScript', name: 'JavaScript' }, dontKnow],
          ...(knownOf.language ? { default: knownOf.language } : {}),
        });
      }
    }
    if (language !== undefined && language !== UNKNOWN) out.language = language;

    // Topology and instances: an --instances flag implies the topology, over a known one.
    let topology = known(f.topology, undefined);
    if (topology === undefined && typeof f.instances === 'number') topology = f.instances > 1 ? 'horizontal' : 'single';
    if (topology === undefined) topology = known(undefined, knownOf.topology);
    if (topology === undefined && askMore) {
      topology = await selectTwice<Topology>(
        ctx,
        `How does the API run in production?${note('topology', knownOf.topology)}`,
        'does the API run as one instance or several?',
        STACK_EXAMPLES.topology,
        TOPOLOGY_CHOICES,
        knownOf.topology,
      );
    }
    if (topology !== undefined && topology !== UNKNOWN) out.topology = topology;
    let instances = known(f.instances, undefined);
    // A known count that contradicts a --topology single is dropped.
    if (instances === undefined && !(f.topology === 'single' && (knownOf.instances ?? 0) > 1))
      instances = known(undefined, knownOf.instances);
    if (instances === undefined && askMore && topology === 'horizontal') {
      const def = knownOf.instances !== undefined ? String(knownOf.instances) : undefined;
      const text = await ctx.prompt.input({
        message: `How many instances at peak? (e.g. 6; ${emptyHint(def !== undefined)})${def ? defaultNote(ctx.known, 'stack.instances') : ''}`,
        ...(def ? { default: def } : {}),
        // A refusal says how to give no number, as the prompt does.
        validate: (t) => {
          if (isUnknownText(t)) return true;
          const verdict = validatorOf((x) => parseNumber(x, Stack.shape.instances, '6'), true)(t);
          return verdict === true
            ? true
            : `${verdict}, ${def === undefined ? 'or leave it empty if unsure' : 'or type unknown to clear it'}`;
        },
      });
      instances = text === '' || isUnknownText(text) ? UNKNOWN : must(parseNumber(text, Stack.shape.instances, '6'));
    }
    if (instances !== undefined && instances !== UNKNOWN) out.instances = instances;

    // Gateway.
    let gateway = known(f.gateway, knownOf.gateway);
    if (gateway === undefined && askMore) {
      gateway = await selectTwice<Gateway>(
        ctx,
        `Is there an API gateway or reverse proxy in front of the API?${note('gateway', knownOf.gateway)}`,
        'is there an API gateway or reverse proxy in front of the API?',
        STACK_EXAMPLES.gateway,
        GATEWAY_CHOICES,
        knownOf.gateway,
      );
    }
    if (gateway !== undefined && gateway !== UNKNOWN) out.gateway = gateway;

    // Store.
    let store = known(f.store, knownOf.store);
    if (store === undefined && askMore) {
      store = await selectTwice<Store>(
        ctx,
        `Is Redis (or a compatible store) available for limiter state?${note('store', knownOf.store)}`,
        'is Redis (or a compatible store) available?',
        STACK_EXAMPLES.store,
        STORE_CHOICES,
        knownOf.store,
      );
    }
    if (store !== undefined && store !== UNKNOWN) out.store = store;

    // Trusted proxies: only meaningful behind a proxy.
    let proxies = known(f.trustedProxies, knownOf.trustedProxies);
    if (proxies === undefined && askMore && out.gateway !== undefined && out.gateway !== 'none') {
      const def = knownOf.trustedProxies && knownOf.trustedProxies.length > 0 ? knownOf.trustedProxies.join(', ') : undefined;
      const text = await ctx.prompt.input({
        message: `Address ranges your ${out.gateway} tier sends from (trusted to name the client IP), e.g. 10.0.0.0/8, 192.168.0.0/16; ${emptyHint(def !== undefined)}${def ? defaultNote(ctx.known, 'stack.trustedProxies') : ''}:`,
        ...(def ? { default: def } : {}),
        validate: (t) => isUnknownText(t) || validatorOf(parseCidrList, true)(t),
      });
      proxies = text === '' || isUnknownText(text) ? UNKNOWN : must(parseCidrList(text));
    }
    if (proxies !== undefined && proxies !== UNKNOWN) out.trustedProxies = proxies;

    return {
      ...(Object.keys(out).length > 0 ? { stack: out } : {}),
      ...(unknownStack ? { unknown: ['stack' as const] } : {}),
    };
  },
};
