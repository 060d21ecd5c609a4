/**
 * Just enough JavaScript/TypeScript reading to recover rate limiter options written as
 * literals: `rateLimit({ windowMs: 15 * 60 * 1000, max: 100 })`. Not a parser: it blanks
 * comments, matches brackets while skipping strings, and evaluates numeric literals and
 * products of them. Anything else is reported by name only.
 */
import type { SettingValue } from './types.js';

/** The text with every comment replaced by spaces (offsets and line numbers preserved). */
export function blankComments(text: string): string {
  const out = text.split('');
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    const next = text[i + 1];
    if (c === '"' || c === "'" || c === '`') {
      i = skipString(text, i);
    } else if (c === '/' && next === '/') {
      while (i < text.length && text[i] !== '\n') out[i++] = ' ';
    } else if (c === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end < 0 ? text.length : end + 2;
      for (; i < stop; i++) if (out[i] !== '\n') out[i] = ' ';
    } else {
      i++;
    }
  }
  return out.join('');
}

/** Index just after the string literal that starts at `start`. */
function skipString(text: string, start: number): number {
  const quote = text[start];
  let i = start + 1;
  while (i < text.length) {
    const c = text[i];
    if (c === '\\') i += 2;
    else if (c === quote) return i + 1;
    else if (c === '\n' && quote !== '`') return i;
    else i++;
  }
  return i;
}

const CLOSERS: Record<string, string> = { '{': '}', '(': ')', '[': ']' };

/** Index of the bracket that closes the one at `open`, or -1. */
function matchBracket(text: string, open: number): number {
  const stack: string[] = [];
  let i = open;
  while (i < text.length) {
    const c = text[i] ?? '';
    if (c === '"' || c === "'" || c === '`') {
      i = skipString(text, i);
      continue;
    }
    const closer = CLOSERS[c];
    if (closer) stack.push(closer);
    else if (c === '}' || c === ')' || c === ']') {
      if (stack.pop() !== c) return -1;
      if (stack.length === 0) return i;
    }
    i++;
  }
  return -1;
}

/** Splits at top-level commas (outside brackets and strings). */
function splitTopLevel(body: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  let i = 0;
  while (i < body.length) {
    const c = body[i];
    if (c === '"' || c === "'" || c === '`') {
      i = skipString(body, i);
      continue;
    }
    if (c === '{' || c === '(' || c === '[') depth++;
    else if (c === '}' || c === ')' || c === ']') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(body.slice(start, i));
      start = i + 1;
    }
    i++;
  }
  parts.push(body.slice(start));
  return parts.map((p) => p.trim()).filter((p) => p.length > 0);
}

const NUMBER_RE = /^(?:\d[\d_]*(?:\.\d[\d_]*)?|\.\d[\d_]*)(?:e[+-]?\d+)?$/i;

/** A numeric literal or a product of them (`15 * 60 * 1000`, `60_000`); undefined for anything else. */
function evalNumber(expr: string): number | undefined {
  const bare = expr.replace(/[()]/g, ' ').trim();
  if (bare === '' || !/^[\d_.eE+\-\s*]+$/.test(bare)) return undefined;
  let product = 1;
  for (const raw of bare.split('*')) {
    const token = raw.trim();
    if (!NUMBER_RE.test(token)) return undefined;
    product *= Number(token.replace(/_/g, ''));
  }
  return Number.isFinite(product) ? product : undefined;
}

/** A literal value, or undefined when the expression is not a plain literal. */
function evalLiteral(expr: string): SettingValue | undefined {
  const e = expr.trim().replace(/\s+as\s+const$/, '');
  const n = evalNumber(e);
  if (n !== undefined) return n;
  if (e === 'true') return true;
  if (e === 'false') return false;
  const str = /^(['"])((?:\\.|(?!\1)[^\\\n])*)\1$/.exec(e) ?? /^(`)((?:\\.|[^`\\$])*)`$/.exec(e);
  if (str) return (str[2] ?? '').replace(/\\(.)/g, '$1');
  return undefined;
}

export interface ObjectLiteral {
  /** Properties whose value is a literal. */
  settings: Record<string, SettingValue>;
  /** Properties whose value is code (functions, clients, variables): names only. */
  other: string[];
  /** Properties whose value is itself an object literal. */
  nested: Record<string, ObjectLiteral>;
}

/** Reads `{ a: 1, b: 'x', c: fn, d: { e: 2 } }` (the text between and including the braces). */
export function parseObjectLiteral(text: string): ObjectLiteral {
  const result: ObjectLiteral = { settings: {}, other: [], nested: {} };
  const inner = text.trim().replace(/^\{/, '').replace(/\}$/, '');
  for (const part of splitTopLevel(inner)) {
    const prop = /^(?:(['"])([^'"\n]+)\1|([A-Za-z_$][\w$]*))\s*:\s*([\s\S]*)$/.exec(part);
    if (!prop) {
      const name = /^(?:async\s+)?\*?\s*([A-Za-z_$][\w$]*)/.exec(part)?.[1];
      if (name && !part.startsWith('...')) result.other.push(name);
      continue;
    }
    const key = prop[2] ?? prop[3] ?? '';
    const valueText = (prop[4] ?? '').trim();
    const value = evalLiteral(valueText);
    if (value !== undefined) result.settings[key] = value;
    else if (valueText.startsWith('{') && matchBracket(valueText, 0) === valueText.length - 1) {
      result.nested[key] = parseObjectLiteral(valueText);
    } else result.other.push(key);
  }
  return result;
}

/**
 * Object literals that directly follow a match of `prefix` (a regex source such as
 * `rateLimit\s*\(` or `\.register\s*\(\s*rateLimit\s*,`). `callText` is the matched prefix, spaces collapsed.
 */
export function findCallObjects(text: string, prefix: string): Array<{ index: number; objectText: string; callText: string }> {
  const found: Array<{ index: number; objectText: string; callText: string }> = [];
  const re = new RegExp(`${prefix}\\s*(\\{)`, 'g');
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const open = m.index + m[0].length - 1;
    const close = matchBracket(text, open);
    if (close < 0) continue;
    found.push({ index: m.index, objectText: text.slice(open, close + 1), callText: m[0].slice(0, -1).replace(/\s+/g, ' ').trim() });
    if (found.length >= 50) break;
  }
  return found;
}

/** Escapes a string for use inside a RegExp. */
export function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
