/**
 * Design question 3, continued: the endpoints that deserve their own limits. Known ones
 * (previous answers, or an OpenAPI file) are listed and confirmed; otherwise a few can be
 * added by hand: route, method, class (guessed from the route) and whether it is
 * anonymous. "Skip" records an empty list, so a later run keeps it over detected ones.
 * Previous endpoints that are not kept are offered one by one as the defaults.
 */
import { ENDPOINT_CLASSES, type METHODS, type Endpoint } from '../../answers/schema.js';
import { fromPrevious, sourceOf, type Step, type StepContext, UNKNOWN } from '../context.js';
import { classifyRoute, printable } from '../detect/index.js';
import { DONT_KNOW_NAME, Q } from '../questions.js';
import { askEach, askText, defaultNote, given, resolve } from '../resolve.js';

type EndpointClass = (typeof ENDPOINT_CLASSES)[number];
type Method = (typeof METHODS)[number];

const MAX_HAND_ENDPOINTS = 30;
const LISTED = 20;

const CLASS_HELP: Record<EndpointClass, string> = {
  auth: 'login, signup, password reset, token',
  read: 'ordinary reads',
  write: 'creates, updates, deletes',
  search: 'search and filtering',
  expensive: 'reports, heavy queries, AI calls',
  export: 'bulk exports and downloads',
  webhook: 'callbacks from other systems',
  health: 'health checks (never limited)',
};

function endpointLine(e: Endpoint, routeWidth = 0): string {
  const extra = [e.class === 'auth' && e.authKind ? e.authKind : '', e.anonymous && e.class !== 'auth' ? 'anonymous' : '']
    .filter(Boolean)
    .join(', ');
  return printable(`  ${(e.method ?? 'ANY').padEnd(7)} ${e.route.padEnd(routeWidth)}  ${e.class}${extra ? ` (${extra})` : ''}`, 160);
}

const HAND_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'ANY'] as const;

/**
 * Endpoints typed in one by one. `before` (the previous ones) gives each its defaults: the
 * route, method, kind and anonymity of the endpoint at the same place; one kept with the
 * same route, method and kind keeps its name and what was written by hand (cost, auth kind).
 */
function addByHand(ctx: StepContext, before: readonly Endpoint[] = []): Promise<Endpoint[]> {
  const names = new Set<string>();
  return askEach(ctx, 'endpoint', MAX_HAND_ENDPOINTS, before, async (earlier) => {
    const route = await askText<string>(ctx, {
      read: { kind: 'route' },
      message: `Route of the endpoint, e.g. /v1/login or /orders/:id${earlier ? defaultNote(ctx.known, 'endpoints') : ''}:`,
      default: earlier?.route,
    });
    const same = earlier?.route === route ? earlier : undefined;
    const earlierMethod = same && (HAND_METHODS as readonly string[]).includes(same.method) ? (same.method as Method) : undefined;
    const method = await ctx.prompt.select<Method>({
      message: `Method of ${route}?`,
      choices: (HAND_METHODS as readonly Method[]).map((m) => ({ value: m, name: m })),
      default: earlierMethod ?? 'GET',
    });
    const guess = classifyRoute(method, route);
    const match = same && same.method === method ? same : undefined;
    const cls = await ctx.prompt.select<EndpointClass>({
      message: `What kind of endpoint is ${method} ${route}?`,
      choices: ENDPOINT_CLASSES.map((c) => ({ value: c, name: c, description: CLASS_HELP[c] })),
      default: match?.class ?? guess.class,
    });
    const kept = match && match.class === cls ? match : undefined;
    const anonymous =
      cls === 'auth' || cls === 'health'
        ? (kept?.anonymous ?? true)
        : await ctx.prompt.confirm({ message: `Can ${method} ${route} be called without signing in?`, default: match?.anonymous ?? false });
    let name = (kept?.name ?? `${method} ${route}`).slice(0, 120);
    for (let n = 2; names.has(name); n++) name = `${method} ${route} (${n})`.slice(0, 120);
    names.add(name);
    const authKind = kept?.authKind ?? (cls === 'auth' && guess.class === 'auth' ? guess.authKind : undefined);
    return {
      name,
      method,
      route,
      class: cls,
      ...(cls === 'auth' && authKind ? { authKind } : {}),
      anonymous,
      ...(kept?.cost !== undefined ? { cost: kept.cost } : {}),
    };
  });
}

export const endpoints: Step = {
  id: 'endpoints',
  item: 3,
  fields: ['endpoints'],
  async run(ctx) {
    // A detected list is never empty; a previous empty list is the answer "skip".
    const previous = fromPrevious(ctx.known, 'endpoints');
    const { value } = await resolve(ctx, Q.endpoints, {
      prompt: {
        kind: 'custom',
        async ask(known) {
          const list = Array.isArray(known) ? known : undefined;
          if (list && list.length > 0) {
            const source = sourceOf(ctx.known, 'endpoints') ?? 'the project';
            ctx.say(previous ? `Endpoints in the ${source}:` : `Endpoints found in ${source}:`);
            const shown = list.slice(0, LISTED);
            const width = Math.min(60, Math.max(...shown.map((e) => e.route.length)));
            for (const e of shown) ctx.say(endpointLine(e, width));
            if (list.length > LISTED) ctx.say(`  ... and ${list.length - LISTED} more`);
            if (await ctx.prompt.confirm({ message: `Use these ${list.length} endpoints?`, default: true })) return list;
          }
          const skipped = previous && list?.length === 0;
          const how = await ctx.prompt.select<'add' | 'skip' | typeof UNKNOWN>({
            message: `Which endpoints need limits of their own (login, search, exports...)?${skipped ? defaultNote(ctx.known, 'endpoints', 'skip') : ''}`,
            choices: [
              { value: 'add', name: 'Add a few by hand', description: 'Route, method and kind; the rest is derived.' },
              { value: 'skip', name: 'Skip', description: 'Treat every route alike for now.' },
              { value: UNKNOWN, name: DONT_KNOW_NAME },
            ],
            default: skipped ? 'skip' : 'add',
          });
          return how === 'add' ? await addByHand(ctx, previous ? list : undefined) : how === 'skip' ? [] : UNKNOWN;
        },
      },
    });
    const list = given(value);
    return list ? { endpoints: list } : {};
  },
};
