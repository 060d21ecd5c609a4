/**
 * The one way user-supplied text reaches generated TypeScript.
 *
 * - tsString   a string literal: JSON.stringify (a valid TypeScript/JavaScript string
 *              literal), with U+2028/U+2029 and `<`, `>` written as \u escapes so the
 *              literal stays inert when the file is embedded in HTML or a Markdown fence.
 *              Backticks, `${`, quotes, backslashes and newlines are all inert inside a
 *              double-quoted literal.
 * - tsComment  text inside a comment: every line terminator JavaScript knows (CR, LF,
 *              U+2028, U+2029) becomes a space, so a `//` comment can not be ended early,
 *              `*` `/` pairs are split so a block comment can not be closed (nor a new
 *              one opened) by the text, and `<` `>` become look-alikes (no markup survives
 *              into an HTML embedding of the file).
 * - tsValue    plain data (strings, finite numbers, booleans, null, arrays, objects whose
 *              keys are identifiers chosen by the generator) as a literal; every string goes
 *              through tsString. Object keys are generator-chosen; data keyed by user text is
 *              emitted as arrays of pairs, never as object keys (so `__proto__` stays data).
 */

import { tsString } from './code.js';

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** Plain data as a TypeScript literal (indented with two spaces per level). */
export function tsValue(value: unknown, indent = ''): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return tsString(value);
    case 'number':
      if (!Number.isFinite(value)) throw new Error(`tsValue: not a finite number: ${value}`);
      return Object.is(value, -0) ? '0' : String(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      const inner = `${indent}  `;
      if (Array.isArray(value)) {
        if (value.length === 0) return '[]';
        const flat = value.every((v) => v === null || typeof v !== 'object');
        if (flat) {
          const one = `[${value.map((v) => tsValue(v)).join(', ')}]`;
          if (one.length <= 100) return one;
        }
        return `[\n${value.map((v) => `${inner}${tsValue(v, inner)},`).join('\n')}\n${indent}]`;
      }
      const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
      if (entries.length === 0) return '{}';
      for (const [k] of entries) {
        if (!IDENTIFIER.test(k) || k === '__proto__') throw new Error(`tsValue: object key must be a plain identifier: ${k}`);
      }
      return `{\n${entries.map(([k, v]) => `${inner}${k}: ${tsValue(v, inner)},`).join('\n')}\n${indent}}`;
    }
    default:
      throw new Error(`tsValue: unsupported value of type ${typeof value}`);
  }
}
