/**
 * Detected facts -> answers defaults. Only fields the answers schema knows are mapped
 * (stack.framework, stack.language, stack.gateway, stack.store, stack.trustedProxies,
 * endpoints, identities); informational facts (existingLimiters, realIpHeader) are not.
 * For each field the first fact whose value the schema accepts wins, so pass facts in
 * precedence order (detectProject's `facts` are).
 */
import { Answers, Cidr, Endpoint, Framework, Gateway, Identity, Stack, Store, type AnswersInput } from '../../answers/schema.js';
import { FIELDS, type Fact } from './types.js';

type Parser = { safeParse(value: unknown): { success: boolean; data?: unknown } };

function firstValid(facts: readonly Fact[], field: string, parse: (value: unknown) => unknown): unknown {
  for (const fact of facts) {
    if (fact.field !== field) continue;
    const value = parse(fact.value);
    if (value !== undefined) return value;
  }
  return undefined;
}

function scalar(schema: Parser): (value: unknown) => unknown {
  return (value) => {
    const r = schema.safeParse(value);
    return r.success ? r.data : undefined;
  };
}

/** Keeps the valid items of an array value (deduplicated); undefined when none are valid. */
function items(schema: Parser, key: (item: unknown) => string = (i) => JSON.stringify(i)): (value: unknown) => unknown {
  return (value) => {
    if (!Array.isArray(value)) return undefined;
    const seen = new Set<string>();
    const out: unknown[] = [];
    for (const item of value) {
      const r = schema.safeParse(item);
      if (!r.success) continue;
      const k = key(r.data);
      if (seen.has(k)) continue;
      seen.add(k);
      out.push(r.data);
    }
    return out.length ? out : undefined;
  };
}

export function factsToAnswers(facts: readonly Fact[]): Partial<AnswersInput> {
  const stack: Record<string, unknown> = {};
  const set = (key: string, value: unknown): void => {
    if (value !== undefined) stack[key] = value;
  };
  set('framework', firstValid(facts, FIELDS.framework, scalar(Framework)));
  set('language', firstValid(facts, FIELDS.language, scalar(Stack.shape.language)));
  set('gateway', firstValid(facts, FIELDS.gateway, scalar(Gateway)));
  set('store', firstValid(facts, FIELDS.store, scalar(Store)));
  set('trustedProxies', firstValid(facts, FIELDS.trustedProxies, items(Cidr)));

  const candidate: Record<string, unknown> = {};
  if (Object.keys(stack).length) candidate.stack = stack;
  const endpoints = firstValid(facts, FIELDS.endpoints, items(Endpoint, (e) => (e as { name: string }).name));
  if (endpoints !== undefined) candidate.endpoints = endpoints;
  const identities = firstValid(facts, FIELDS.identities, items(Identity));
  if (identities !== undefined) candidate.identities = identities;

  // Belt and braces: every part was validated above; drop any top-level key the whole schema refuses.
  for (let attempt = 0; attempt < 4; attempt++) {
    const result = Answers.safeParse(candidate);
    if (result.success) return candidate as Partial<AnswersInput>;
    for (const issue of result.error.issues) {
      const top = issue.path[0];
      if (typeof top === 'string') delete candidate[top];
    }
  }
  return {};
}
