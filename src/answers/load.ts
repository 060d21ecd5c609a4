/** Parsing and validating an answers file's text: one clear message per problem, with its JSON path. */
import type { z } from 'zod';
import { UserError } from '../messages.js';
import { jsonSyntaxProblem } from './json-error.js';
import { Answers } from './schema.js';

/** The most items a list of the answers file may hold: enough for any real API, and a design that stays readable. */
export const LIST_CAPS = { endpoints: 200, rules: 200, plans: 50, outbound: 50 } as const;

/** The article and noun for a type name zod reports. */
const TYPE_NAMES: Record<string, string> = {
  int: 'an integer',
  integer: 'an integer',
  object: 'an object',
  array: 'an array',
  string: 'a string',
  number: 'a number',
  boolean: 'true or false',
  record: 'an object',
  map: 'an object',
};
const typeName = (t: string): string => TYPE_NAMES[t] ?? (/^[aeiou]/i.test(t) ? `an ${t}` : `a ${t}`);

/** `$.endpoints[2].route` style path for an issue. */
export function jsonPath(path: readonly PropertyKey[]): string {
  let out = '$';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else if (typeof p === 'string' && /^[A-Za-z_$][\w$]*$/.test(p)) out += `.${p}`;
    else out += `[${JSON.stringify(String(p))}]`;
  }
  return out;
}

function describeIssue(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'invalid_value':
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'invalid_type':
      if (issue.input === undefined) return `is required (${typeName(issue.expected)})`;
      if (typeof issue.input === 'number' && !Number.isFinite(issue.input)) {
        return `must be a finite number: ${issue.input > 0 ? 'this one is larger than the largest number JSON can carry here (about 1.8e308)' : issue.input < 0 ? 'this one is below the smallest number JSON can carry here (about -1.8e308)' : 'this one is not a number'}`;
      }
      return `must be ${typeName(issue.expected)}`;
    case 'unrecognized_keys':
      return `has unknown field(s) ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}; check the spelling against schemas/answers.schema.json`;
    case 'invalid_union':
      return 'does not match any allowed form (see schemas/answers.schema.json)';
    case 'too_small':
      if (!issue.message.startsWith('Too small')) return issue.message;
      if (issue.origin === 'string') return `must be at least ${String(issue.minimum)} character(s) long`;
      if (issue.origin === 'array') return `must have at least ${String(issue.minimum)} item(s)`;
      return `must be ${issue.inclusive === false ? 'greater than' : 'at least'} ${String(issue.minimum)}`;
    case 'too_big':
      if (!issue.message.startsWith('Too big')) return issue.message;
      if (issue.origin === 'string') return `must be at most ${String(issue.maximum)} characters long`;
      if (issue.origin === 'array') return `must have at most ${String(issue.maximum)} items`;
      return `must be ${issue.inclusive === false ? 'less than' : 'at most'} ${String(issue.maximum)}`;
    default:
      return issue.message;
  }
}

interface AnswersProblem {
  path: string;
  message: string;
}

export function answersProblems(error: z.ZodError): AnswersProblem[] {
  return error.issues.map((issue) => {
    if (issue.code === 'invalid_union' && issue.discriminator === undefined && issue.errors.length > 0) {
      // Report the closest branch: the one with the fewest problems.
      const best = [...issue.errors].sort((a, b) => a.length - b.length)[0] ?? [];
      const first = best[0];
      if (first) return { path: jsonPath([...issue.path, ...first.path]), message: describeIssue(first) };
    }
    return { path: jsonPath(issue.path), message: describeIssue(issue) };
  });
}

// eslint-disable-next-line no-control-regex
const CONTROL_RE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;
// eslint-disable-next-line no-control-regex
const CONTROL_IN_NAME_RE = /[\u0000-\u001f\u007f-\u009f]/;
/** Fields that name something and appear in headings, keys and terminal lines: not even a tab or newline. */
const NAME_FIELDS = new Set(['name', 'id', 'route', 'key']);

/** Control characters (ESC, BEL, ...) anywhere in the answers: they would reach the terminal and the document. */
function controlProblems(value: unknown, at: PropertyKey[] = [], out: AnswersProblem[] = []): AnswersProblem[] {
  if (out.length >= 20) return out;
  const check = (text: string, where: PropertyKey[], strict: boolean): void => {
    const m = (strict ? CONTROL_IN_NAME_RE : CONTROL_RE).exec(text);
    if (m) {
      const code = (m[0].codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0');
      out.push({
        path: jsonPath(where),
        message: `must not contain control characters (found U+${code}${code === '001B' ? ', ESC' : code === '0007' ? ', BEL' : ''})`,
      });
    }
  };
  if (typeof value === 'string') {
    const last = at[at.length - 1];
    check(value, at, typeof last === 'string' && NAME_FIELDS.has(last));
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => controlProblems(v, [...at, i], out));
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (CONTROL_IN_NAME_RE.test(k)) check(k, [...at, k.replace(CONTROL_IN_NAME_RE, '?')], true);
      else controlProblems(v, [...at, k], out);
    }
  }
  return out;
}

/** Lists longer than LIST_CAPS allows, checked before anything else reads them. */
function capProblems(raw: unknown): AnswersProblem[] {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return [];
  const out: AnswersProblem[] = [];
  for (const [field, cap] of Object.entries(LIST_CAPS)) {
    const list = (raw as Record<string, unknown>)[field];
    if (Array.isArray(list) && list.length > cap)
      out.push({ path: `$.${field}`, message: `has ${list.length} items; at most ${cap} are allowed` });
  }
  return out;
}

function invalid(file: string, problems: AnswersProblem[]): UserError {
  return new UserError('answersInvalid', {
    file,
    count: problems.length,
    problems: problems.map((p) => `  ${p.path}: ${p.message}`).join('\n'),
  });
}

/** Parses JSON text into Answers or throws a UserError (exit 2) listing every problem. A UTF-8 byte order mark is allowed. */
export function parseAnswers(text: string, file: string): Answers {
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  let raw: unknown;
  try {
    raw = JSON.parse(body);
  } catch {
    const where = jsonSyntaxProblem(body);
    throw new UserError('answersNotJson', {
      file,
      reason: where ? `line ${where.line}, column ${where.column}: ${where.problem}` : 'it does not parse',
    });
  }
  const early = [...capProblems(raw), ...controlProblems(raw)];
  if (early.length > 0) throw invalid(file, early);
  const result = Answers.safeParse(raw, { reportInput: true });
  if (!result.success) {
    throw invalid(file, answersProblems(result.error));
  }
  return result.data;
}
