/**
 * The one place an answer is decided. A question (questions.ts) is answered by, in order:
 *
 * 1. its flag (`unknown` on the command line is "don't know");
 * 2. its known value: the previous answers file, else what detection found (`ctx.known`),
 *    taken as it is without a terminal (--yes, no TTY) or when the person kept it in a
 *    "Keep ...?" offer; otherwise it is the prompt's default, named with its source;
 * 3. without a terminal: the question's default, or nothing (the design states an assumption);
 * 4. the prompt, which reads and checks what is typed with the flag's own rules, offers
 *    "don't know" where the answer may stay open, and asks once more, after examples, where
 *    the question says so (a "don't know" that repeats a previous one is not asked again).
 *
 * Ctrl-C at a prompt rejects with PromptCancelled, so nothing is written.
 */
import { fromPrevious, type Known, sourceOf, type StepContext, valueAt } from './context.js';
import { readText } from './flags.js';
import type { Parsed } from './parse.js';
import { DONT_KNOW_NAME, type Prompt, type Question, type Reading } from './questions.js';
import { UNKNOWN, type Unknown } from './unknown.js';

type Source = 'flag' | 'previous' | 'detected' | 'default' | 'prompt';

interface Resolved<T> {
  /** undefined: nothing answered it (not asked). */
  value: T | Unknown | undefined;
  source?: Source;
}

/** How a step answers one question; all optional. */
export interface ResolveOptions<T> {
  /** Known values answer without asking: false while a terminal is there, unless a "Keep ...?" offer was accepted. */
  use?: boolean;
  /** Whether the question may be asked (default: a terminal is there). A step narrows it (asked only behind a gateway...). */
  ask?: boolean;
  /** The known value when the step derives it (present even as undefined: nothing is known). */
  known?: T | Unknown;
  /** The answers field whose source names the known value (default: the question's). */
  from?: string;
  /** The known value as named in the prompt's default note (default: the question's `show`). */
  shown?: string;
  /** The answer when nothing else gives one (default: the question's). */
  fallback?: T;
  /** Words filled into the message: {gateway}. */
  words?: Record<string, string>;
  /** Asked instead of the question's own prompt. */
  prompt?: Prompt<T>;
  /** A further check of a typed value: the refusal, or undefined. */
  check?: (value: T) => string | undefined;
}

/** The value unless it is "don't know". */
export const given = <T>(value: T | Unknown | undefined): T | undefined => (value === UNKNOWN ? undefined : value);

export async function resolve<T>(ctx: StepContext, q: Question<T>, o: ResolveOptions<T> = {}): Promise<Resolved<T>> {
  const flag = ctx.flags[q.id] as T | Unknown | undefined;
  if (flag !== undefined) return { value: flag, source: 'flag' };
  const known = 'known' in o ? o.known : (valueAt(ctx.known.answers, q.field) as T | undefined);
  const from = o.from ?? q.field;
  const prompt = o.prompt ?? q.prompt;
  if (known !== undefined && ((o.use ?? !ctx.interactive) || !prompt)) {
    return { value: known, source: fromPrevious(ctx.known, from) ? 'previous' : 'detected' };
  }
  const fallback = 'fallback' in o ? o.fallback : q.fallback;
  if (!prompt || !(o.ask ?? ctx.interactive)) return fallback === undefined ? { value: undefined } : { value: fallback, source: 'default' };
  const shown = o.shown ?? (known !== undefined && known !== UNKNOWN && q.show ? q.show(known) : undefined);
  const note = known === undefined ? '' : defaultNote(ctx.known, from, prompt.kind === 'input' ? undefined : (shown ?? shownValue(known)));
  return { value: await ask(ctx, q, prompt, known ?? fallback, note, o), source: 'prompt' };
}

/** The note goes before a closing colon: 'Time zone ... (default from x):'. */
const withNote = (message: string, note: string): string =>
  message.endsWith(':') ? `${message.slice(0, -1)}${note}:` : `${message}${note}`;

const fill = (message: string, words: Record<string, string>): string => message.replace(/\{(\w+)\}/g, (m, w: string) => words[w] ?? m);

function checkPicks(chosen: readonly unknown[]): true | string {
  if (chosen.length === 0) return `Pick at least one with space, or pick "${DONT_KNOW_NAME}".`;
  if (chosen.includes(UNKNOWN) && chosen.length > 1)
    return `"${DONT_KNOW_NAME}" cannot be combined with other choices: unpick one of them.`;
  return true;
}

async function ask<T>(
  ctx: StepContext,
  q: Question<T>,
  prompt: Prompt<T>,
  def: T | Unknown | undefined,
  note: string,
  o: ResolveOptions<T>,
): Promise<T | Unknown> {
  if (prompt.kind === 'custom') return prompt.ask(def);
  if (prompt.kind === 'input') return askInput(ctx, q, prompt, def, note, o);
  const once = async (again: boolean): Promise<T | Unknown> => {
    const message = again && prompt.again ? prompt.again.message : withNote(fill(prompt.message, o.words ?? {}), note);
    if (prompt.kind === 'select') {
      return ctx.prompt.select<T | Unknown>({
        message,
        choices: prompt.choices as never,
        ...(def !== undefined ? { default: def } : {}),
      });
    }
    const picked = (v: unknown): boolean => (Array.isArray(def) ? def.includes(v) : def === v);
    const chosen = await ctx.prompt.checkbox<unknown>({
      message,
      choices: prompt.choices.map((c) => (picked(c.value) ? { ...c, checked: true } : c)),
      validate: checkPicks,
    });
    return chosen.includes(UNKNOWN) ? UNKNOWN : (keepOrder(chosen, Array.isArray(def) ? def : undefined) as T);
  };
  const first = await once(false);
  // A "don't know" that repeats a previous one was asked twice then.
  if (first !== UNKNOWN || !prompt.again || def === UNKNOWN) return first;
  for (const line of prompt.again.examples) ctx.say(line);
  return once(true);
}

async function askInput<T>(
  ctx: StepContext,
  q: Pick<Question<T>, 'read' | 'field' | 'none'>,
  prompt: Extract<Prompt<T>, { kind: 'input' }>,
  def: T | Unknown | undefined,
  note: string,
  o: ResolveOptions<T>,
): Promise<T | Unknown> {
  const shownDef = def === undefined || def === UNKNOWN ? '' : Array.isArray(def) ? def.join(', ') : String(def);
  const hasDefault = shownDef !== '';
  const { blank } = prompt;
  const hint =
    blank === 'none' ? `${hasDefault ? '"none"' : 'empty'} for none` : blank ? (hasDefault ? 'unknown to clear' : `empty if ${blank}`) : '';
  const isBlank = (t: string): boolean =>
    blank === 'none' ? t === '' || t.toLowerCase() === 'none' : blank !== undefined && (t === '' || isUnknownText(t));
  // A refused number says how to give none, as the prompt does.
  const orNone =
    q.read.kind === 'number' && blank && blank !== 'none'
      ? `, ${hasDefault ? 'or type unknown to clear it' : `or leave it empty if ${blank}`}`
      : '';
  const read = (t: string): Parsed<T> => {
    const r = readText(q.read, t, q.field) as Parsed<T>;
    if (!r.ok) return { ok: false, message: prompt.refusal ? prompt.refusal.replace('{problem}', r.message) : r.message + orNone };
    const problem = o.check?.(r.value);
    return problem ? { ok: false, message: problem } : r;
  };
  const text = await ctx.prompt.input({
    message: withNote(fill(prompt.message, { ...o.words, hint }), note),
    ...(hasDefault ? { default: shownDef } : {}),
    validate: (t) => {
      if (isBlank(t)) return true;
      const r = read(t);
      return r.ok ? true : r.message;
    },
  });
  if (isBlank(text)) return blank === 'none' ? ((q.none ?? null) as T) : UNKNOWN;
  const r = read(text);
  if (!r.ok) throw new Error(`internal error: validated input did not parse: ${r.message}`);
  return r.value;
}

/**
 * A question inside a step's own list (a plan's name, an endpoint's route): no flag or known
 * value of its own, but read, checked and refused like any other. undefined: left empty (`blank`).
 */
export async function askText<T>(
  ctx: StepContext,
  q: {
    read: Reading;
    message: string;
    default?: unknown;
    blank?: 'none';
    refusal?: string;
    field?: string;
    check?: (value: T) => string | undefined;
  },
): Promise<T> {
  const value = await askInput<T>(ctx, { read: q.read, field: q.field ?? '' }, { kind: 'input', ...q }, q.default as T, '', q);
  return (value === UNKNOWN || value === null ? undefined : value) as T;
}

/**
 * Before a list is typed in, whether there is one: No first (Enter on a question not yet thought
 * about opens no sub-questions), Yes (then `items`, with the known list as their defaults), Don't know.
 */
export async function askList<T>(
  ctx: StepContext,
  field: string,
  known: unknown,
  question: { message: string; yes?: string },
  items: (before?: T[]) => Promise<T[]>,
): Promise<T[] | Unknown> {
  const before = Array.isArray(known) ? (known as T[]) : undefined;
  const def = before === undefined ? undefined : before.length > 0 ? 'yes' : 'no';
  const has = await ctx.prompt.select<'yes' | 'no' | Unknown>({
    message: `${question.message}${def ? defaultNote(ctx.known, field, def) : ''}`,
    choices: [
      { value: 'no', name: 'No' },
      { value: 'yes', name: 'Yes', ...(question.yes ? { description: question.yes } : {}) },
      { value: UNKNOWN, name: DONT_KNOW_NAME },
    ],
    ...(def ? { default: def } : {}),
  });
  return has === 'yes' ? items(before) : has === 'no' ? [] : UNKNOWN;
}

/** Items typed in one by one, at most `max`, each given the item at its place in `before` (its defaults). */
export async function askEach<T>(
  ctx: StepContext,
  noun: string,
  max: number,
  before: readonly T[],
  one: (earlier: T | undefined, so: readonly T[]) => Promise<T>,
): Promise<T[]> {
  const out: T[] = [];
  for (;;) {
    out.push(await one(before[out.length], out));
    if (out.length >= max) {
      ctx.say(`That is ${max} ${noun}s; add more to the answers file by hand if needed.`);
      return out;
    }
    if (!(await ctx.prompt.confirm({ message: `Add another ${noun}?`, default: out.length < before.length }))) return out;
  }
}

/** A known value as text: lists joined, an empty list as none, "don't know" spelled out. */
function shownValue(value: unknown): string {
  if (value === UNKNOWN) return "don't know";
  if (Array.isArray(value)) return value.length === 0 ? 'none' : value.map(shownValue).join(', ');
  return String(value);
}

/** What a person types for "I don't know" at a text prompt ("unknown", "don't know", "not sure", "?"...). */
const UNKNOWN_WORDS = new Set([UNKNOWN, "don't know", 'dont know', 'do not know', 'not sure', 'unsure', 'no idea', 'n/a', '?']);

function isUnknownText(text: string): boolean {
  return UNKNOWN_WORDS.has(
    text
      .trim()
      .toLowerCase()
      .replace(/\u2019/g, "'")
      .replace(/\s+/g, ' '),
  );
}

/** The known list when `chosen` holds the same items (a checkbox returns them in its own order), else `chosen`. */
function keepOrder<T>(chosen: T[], known: readonly T[] | undefined): T[] {
  return known && chosen.length === known.length && chosen.every((c) => known.includes(c)) ? [...known] : chosen;
}

/** One known value offered in a "Keep ...?" confirm. */
interface KnownItem {
  /** Whose source is named (a JSON path of `known.byField`). */
  field: string;
  /** What the value is, e.g. 'framework'; '' for none. */
  label: string;
  value: unknown;
  /** The value as text, when shownValue would not say it well. */
  shown?: string;
}

/**
 * 'framework express, store redis (package.json), topology horizontal (previous answers in
 * rate-limit.answers.json)': the values, each run of values from one source followed by it.
 */
function describeKnown(known: Known, items: readonly KnownItem[]): string {
  const parts: string[] = [];
  let run: string[] = [];
  let runSource: string | undefined;
  const flush = (): void => {
    if (run.length > 0) parts.push(`${run.join(', ')}${runSource ? ` (${runSource})` : ''}`);
    run = [];
  };
  for (const item of items) {
    const source = sourceOf(known, item.field);
    if (run.length > 0 && source !== runSource) flush();
    runSource = source;
    const shown = item.shown ?? shownValue(item.value);
    run.push(item.label ? `${item.label} ${shown}` : shown);
  }
  flush();
  return parts.join(', ');
}

/**
 * The note a question carries when its default is a known value: ' (default: markdown, from
 * previous answers in rate-limit.answers.json)', or without `shown` (inputs show their default
 * themselves) ' (default from package.json)'. Empty when the value has no source.
 */
export function defaultNote(known: Known, field: string, shown?: string): string {
  const source = sourceOf(known, field);
  if (!source) return '';
  return shown === undefined ? ` (default from ${source})` : ` (default: ${shown}, from ${source})`;
}

/** One known value offered in a "Keep ...?" confirm: the question's own unless the step derives it. */
interface Offer {
  q: Question;
  value?: unknown;
  from?: string;
  shown?: string;
}

/**
 * Offers the known values of a step's questions (those no flag answers) in one confirm, yes by
 * default. Kept, they answer their questions (`use`); a step answered before (any of them is a
 * previous answer) then asks nothing more (`ask` false): what it left open was left open then.
 * Detected facts alone leave the rest to be asked. Without a terminal nothing is offered: known
 * values answer.
 */
export async function offerKnown(
  ctx: StepContext,
  message: (described: string) => string,
  offers: readonly Offer[],
): Promise<{ use: boolean; ask: boolean }> {
  const items: KnownItem[] = [];
  for (const { q, ...o } of offers) {
    const value = 'value' in o ? o.value : valueAt(ctx.known.answers, q.field);
    if (ctx.flags[q.id] !== undefined || value === undefined) continue;
    const shown = o.shown ?? (q.show && value !== UNKNOWN ? q.show(value) : undefined);
    items.push({ field: o.from ?? q.field, label: q.label ?? '', value, ...(shown !== undefined ? { shown } : {}) });
  }
  if (!ctx.interactive || items.length === 0) return { use: !ctx.interactive, ask: ctx.interactive };
  const kept = await ctx.prompt.confirm({ message: message(describeKnown(ctx.known, items)), default: true });
  return { use: kept, ask: !(kept && items.some((i) => fromPrevious(ctx.known, i.field))) };
}

/** Sets a resolved value at its answers field in a step's patch (skipped when nothing or "don't know" answered). */
export function put(patch: Record<string, unknown>, field: string, value: unknown): void {
  if (value === undefined || value === UNKNOWN) return;
  const keys = field.split('.');
  let at = patch;
  for (const key of keys.slice(0, -1)) at = (at[key] ??= {}) as Record<string, unknown>;
  at[keys[keys.length - 1] as string] = value;
}
