/** Parsing and validating an answers file's text: one clear message per problem, with its JSON path. */
import type { z } from 'zod';
import { UserError } from '../messages.js';
import { Answers } from './schema.js';

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
      return issue.input === undefined ? `is required (${issue.expected})` : `must be ${issue.expected === 'array' ? 'an array' : `a ${issue.expected}`}`;
    case 'unrecognized_keys':
      return `has unknown field(s) ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}; check the spelling against schemas/answers.schema.json`;
    case 'invalid_union':
      return 'does not match any allowed form (see schemas/answers.schema.json)';
    case 'too_small':
      return issue.message.startsWith('Too small') ? `must be at least ${String(issue.minimum)}` : issue.message;
    case 'too_big':
      return issue.message.startsWith('Too big') ? `must be at most ${String(issue.maximum)}` : issue.message;
    default:
      return issue.message;
  }
}

export interface AnswersProblem {
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

/** Parses JSON text into Answers or throws a UserError (exit 2) listing every problem. */
export function parseAnswers(text: string, file: string): Answers {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new UserError('answersNotJson', { file, reason: (e as Error).message });
  }
  const result = Answers.safeParse(raw, { reportInput: true });
  if (!result.success) {
    const problems = answersProblems(result.error);
    throw new UserError('answersInvalid', {
      file,
      count: problems.length,
      problems: problems.map((p) => `  ${p.path}: ${p.message}`).join('\n'),
    });
  }
  return result.data;
}
