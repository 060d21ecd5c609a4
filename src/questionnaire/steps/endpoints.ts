/**
 * Phase 1 item 3, continued: the endpoints that deserve their own limits. Detected ones
 * (OpenAPI) are listed and confirmed; otherwise a few can be added by hand: route,
 * method, class (guessed from the route) and whether it is anonymous.
 */
import { ENDPOINT_CLASSES, METHODS, type Endpoint } from '../../answers/schema.js';
import { DONT_KNOW_NAME, UNKNOWN, type Step, type StepContext } from '../context.js';
import { classifyRoute, printable } from '../detect/index.js';
import { must, parseRoute, validatorOf } from '../parse.js';

type EndpointClass = (typeof ENDPOINT_CLASSES)[number];
type Method = (typeof METHODS)[number];

export const MAX_HAND_ENDPOINTS = 30;
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

export function endpointLine(e: Endpoint, routeWidth = 0): string {
  const extra = [e.class === 'auth' && e.authKind ? e.authKind : '', e.anonymous && e.class !== 'auth' ? 'anonymous' : ''].filter(Boolean).join(', ');
  return printable(`  ${(e.method ?? 'ANY').padEnd(7)} ${e.route.padEnd(routeWidth)}  ${e.class}${extra ? ` (${extra})` : ''}`, 160);
}

async function addByHand(ctx: StepContext): Promise<Endpoint[]> {
  const out: Endpoint[] = [];
  const names = new Set<string>();
  for (;;) {
    const route = must(
      parseRoute(
        await ctx.prompt.input({
          message: 'Route of the endpoint, e.g. /v1/login or /orders/:id:',
          validate: validatorOf(parseRoute),
        }),
      ),
    );
    const method = await ctx.prompt.select<Method>({
      message: `Method of ${route}?`,
      choices: (['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'ANY'] as const).map((m) => ({ value: m, name: m })),
      default: 'GET',
    });
    const guess = classifyRoute(method, route);
    const cls = await ctx.prompt.select<EndpointClass>({
      message: `What kind of endpoint is ${method} ${route}?`,
      choices: ENDPOINT_CLASSES.map((c) => ({ value: c, name: c, description: CLASS_HELP[c] })),
      default: guess.class,
    });
    const anonymous =
      cls === 'auth' || cls === 'health'
        ? true
        : await ctx.prompt.confirm({ message: `Can ${method} ${route} be called without signing in?`, default: false });
    let name = `${method} ${route}`.slice(0, 120);
    for (let n = 2; names.has(name); n++) name = `${method} ${route} (${n})`.slice(0, 120);
    names.add(name);
    out.push({
      name,
      method,
      route,
      class: cls,
      ...(cls === 'auth' && guess.class === 'auth' && guess.authKind ? { authKind: guess.authKind } : {}),
      anonymous,
    });
    if (out.length >= MAX_HAND_ENDPOINTS) {
      ctx.say(`That is ${MAX_HAND_ENDPOINTS} endpoints; add more to the answers file by hand if needed.`);
      break;
    }
    if (!(await ctx.prompt.confirm({ message: 'Add another endpoint?', default: false }))) break;
  }
  return out;
}

export const endpoints: Step = {
  id: 'endpoints',
  item: 3,
  async run(ctx) {
    const flag = ctx.flags.endpoints;
    if (flag === UNKNOWN) return {};
    if (flag !== undefined) return flag.length > 0 ? { endpoints: flag } : {};
    const detected = ctx.detected.answers.endpoints as Endpoint[] | undefined;
    if (!ctx.interactive) return detected && detected.length > 0 ? { endpoints: detected } : {};
    if (detected && detected.length > 0) {
      const source = ctx.detected.byField.endpoints?.source ?? 'the project';
      ctx.say(`Endpoints found in ${source}:`);
      const shown = detected.slice(0, LISTED);
      const width = Math.min(60, Math.max(...shown.map((e) => e.route.length)));
      for (const e of shown) ctx.say(endpointLine(e, width));
      if (detected.length > LISTED) ctx.say(`  ... and ${detected.length - LISTED} more`);
      const keep = await ctx.prompt.confirm({ message: `Use these ${detected.length} endpoints?`, default: true });
      if (keep) return { endpoints: detected };
    }
    const how = await ctx.prompt.select<'add' | 'skip' | typeof UNKNOWN>({
      message: 'Which endpoints need limits of their own (login, search, exports...)?',
      choices: [
        { value: 'add', name: 'Add a few by hand', description: 'Route, method and kind; the rest is derived.' },
        { value: 'skip', name: 'Skip', description: 'Treat every route alike for now.' },
        { value: UNKNOWN, name: DONT_KNOW_NAME },
      ],
      default: 'add',
    });
    if (how !== 'add') return {};
    return { endpoints: await addByHand(ctx) };
  },
};
