/** Shared by the commands: resolve the answers source (file or built-in example) and build the Design. */
import path from 'node:path';
import { parseAnswers } from '../answers/load.js';
import type { Answers } from '../answers/schema.js';
import { buildDesign } from '../design/build.js';
import { formatNumber } from '../format.js';
import { edgeRateProblems, handRuleProblems } from '../design/hand-rule-checks.js';
import type { Design } from '../design/model.js';
import { readTextFile } from '../io/write.js';
import { displayPath, expandHome } from '../io/safe-fs.js';
import { UserError } from '../messages.js';
import { EXAMPLES_DIR, exampleNames } from '../paths.js';
import type { CommandContext } from './context.js';

export interface SourceOptions {
  answers?: string;
  example?: string;
  date?: string;
  /** The text of the answers file at `answers`, when the caller holds it (init, before writing it). */
  answersText?: string;
}

export function validDate(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const d = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === value;
}

/** The answers, the file they came from, and its text as read (the SARIF log and verify's record locate and hash it). */
async function loadAnswers(ctx: CommandContext, opts: SourceOptions): Promise<{ answers: Answers; file: string; text: string }> {
  if (opts.answers && opts.example)
    throw new UserError('badOption', { option: '--example', reason: 'use either -a FILE or --example NAME, not both' });
  let file: string;
  if (opts.example) {
    const names = exampleNames();
    if (!names.includes(opts.example)) {
      throw new UserError('badOption', {
        option: '--example',
        reason: `unknown example "${opts.example}"; choose one of ${names.join(', ')}`,
      });
    }
    file = path.join(EXAMPLES_DIR, `${opts.example}.answers.json`);
  } else {
    file = path.resolve(ctx.cwd, expandHome(opts.answers ?? 'rate-limit.answers.json'));
  }
  const shown = displayPath(ctx.cwd, file);
  const text =
    opts.answersText ??
    (await readTextFile(file, 'answersNotFound').catch((e: unknown) => {
      if (e instanceof UserError && 'file' in e.data) throw new UserError(e.messageId, { ...e.data, file: shown });
      throw e;
    }));
  return { answers: parseAnswers(text, shown), file, text };
}

/**
 * Names the answers use to point at each other, which the schema cannot check: endpoint
 * names are unique, and a rule's endpoints name endpoints of the design (those the answers
 * list, or the assumed ones when they list none). A rule naming no endpoint would cover
 * nothing and enforce nothing, silently.
 */
function referenceProblems(answers: Answers, design: Design): string[] {
  const problems: string[] = [];
  const seen = new Map<string, number>();
  (answers.endpoints ?? []).forEach((e, i) => {
    const first = seen.get(e.name);
    if (first !== undefined)
      problems.push(`  $.endpoints[${i}].name: "${e.name}" is already the name of endpoints[${first}]; give each endpoint its own name`);
    else seen.set(e.name, i);
  });
  const names = design.scope.endpoints.map((e) => e.name);
  const known = new Set(names);
  (answers.rules ?? []).forEach((r, i) => {
    (r.endpoints ?? []).forEach((name, j) => {
      if (!known.has(name)) {
        problems.push(
          `  $.rules[${i}].endpoints[${j}]: "${name}" is not an endpoint of the design; use one of ${names.map((n) => `"${n}"`).join(', ')}`,
        );
      }
    });
  });
  return problems;
}

/**
 * An edge 429 body the gateway would refuse for its size (AWS WAF's custom response, API
 * Gateway's templates): the documentation URL appears twice in it, beside the ids of the rules
 * it names, so the field to shorten is headers.docsUrl (or, without one, the rules).
 */
async function gatewayBodyProblems(answers: Answers, design: Design): Promise<string[]> {
  if (design.scope.gateway !== 'aws-api-gateway') return [];
  const { awsBodyOversize } = await import('../codegen/gateway/cloud.js');
  const docs = answers.headers?.docsUrl;
  return awsBodyOversize(design).map((o) => {
    const fit = docs !== undefined ? docs.length - Math.ceil(o.over / 2) : 0;
    return docs !== undefined && fit > 'https://a.b'.length
      ? `  $.headers.docsUrl: ${o.where} in gateway/aws-api-gateway.json would be ${o.size}, over ${o.limit}: the URL (${formatNumber(docs.length)} characters) appears twice in it, beside the ids of the ${o.rules} rules it names. Allowed: a URL of at most ${formatNumber(fit)} characters`
      : `  $.rules: ${o.where} in gateway/aws-api-gateway.json would be ${o.size}, over ${o.limit}, with the ids of the ${o.rules} rules it names. Allowed: fewer or shorter rule ids at the edge${docs !== undefined ? ', or a shorter headers.docsUrl' : ''}, or layer "middleware" for some of them`;
  });
}

export async function loadDesign(
  ctx: CommandContext,
  opts: SourceOptions,
): Promise<{ design: Design; answers: Answers; file: string; text: string }> {
  if (opts.date !== undefined && !validDate(opts.date)) {
    throw new UserError('badOption', { option: '--date', reason: `"${opts.date}" is not a calendar date in the form YYYY-MM-DD` });
  }
  const { answers, file, text } = await loadAnswers(ctx, opts);
  const design = buildDesign(answers, { date: opts.date ?? ctx.today() });
  const problems = referenceProblems(answers, design);
  // names and keys of rules entries that would silently do nothing, or count two callers as one
  // and edge rules, written or derived, that the gateway's file would count more leniently than stated
  if (problems.length === 0)
    problems.push(
      ...handRuleProblems(answers, design),
      ...edgeRateProblems(answers, design),
      ...(await gatewayBodyProblems(answers, design)),
    );
  if (problems.length > 0) {
    throw new UserError('answersInvalid', { file: displayPath(ctx.cwd, file), count: problems.length, problems: problems.join('\n') });
  }
  return { design, answers, file, text };
}
