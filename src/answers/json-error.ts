/**
 * Where a JSON text goes wrong, as a line and column with a plain description, for the error
 * message of an answers file that does not parse. JSON.parse's own message differs between
 * Node versions, gives a byte offset and quotes raw file bytes (control characters included);
 * this small scanner follows the JSON grammar and reports the first place it breaks.
 */
import { lineColumn } from '../io/text.js';

interface JsonSyntaxProblem {
  line: number;
  column: number;
  problem: string;
}

class Stop {
  constructor(
    readonly offset: number,
    readonly problem: string,
  ) {}
}

const MAX_DEPTH = 512;
const NUMBER_RE = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/** What is at `offset`, printable: `'}'`, `U+001B`, or "the end of the file". */
function describeAt(text: string, offset: number): string {
  if (offset >= text.length) return 'the end of the file';
  const code = text.codePointAt(offset) as number;
  if (code > 0x20 && code < 0x7f) return `'${String.fromCodePoint(code)}'`;
  return `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
}

function scan(text: string): void {
  let i = 0;
  const fail = (problem: string): never => {
    throw new Stop(i, problem);
  };
  const ws = (): void => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const string = (): void => {
    i++;
    for (;;) {
      if (i >= text.length) fail('a string is not closed (a missing ")');
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return;
      }
      if (c === 0x5c) {
        const next = text[i + 1];
        if (next !== undefined && '"\\/bfnrt'.includes(next)) i += 2;
        else if (next === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) i += 6;
        else fail('an invalid escape after \\ in a string');
        continue;
      }
      if (c < 0x20) fail(`a control character (${describeAt(text, i)}) inside a string; write it as an escape such as \\n`);
      i++;
    }
  };
  const value = (depth: number): void => {
    ws();
    if (depth > MAX_DEPTH) fail(`nested more than ${MAX_DEPTH} levels deep`);
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail(`expected a property name in double quotes, found ${describeAt(text, i)}`);
        string();
        ws();
        if (text[i] !== ':') fail(`expected ':' after the property name, found ${describeAt(text, i)}`);
        i++;
        value(depth + 1);
        ws();
        if (text[i] === ',') {
          i++;
          ws();
          if (text[i] === '}') fail("a comma before '}': JSON allows no trailing comma");
          continue;
        }
        if (text[i] === '}') {
          i++;
          return;
        }
        fail(`expected ',' or '}' after a property value, found ${describeAt(text, i)}`);
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (;;) {
        value(depth + 1);
        ws();
        if (text[i] === ',') {
          i++;
          ws();
          if (text[i] === ']') fail("a comma before ']': JSON allows no trailing comma");
          continue;
        }
        if (text[i] === ']') {
          i++;
          return;
        }
        fail(`expected ',' or ']' after an array item, found ${describeAt(text, i)}`);
      }
    }
    if (c === '"') {
      string();
      return;
    }
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) {
      NUMBER_RE.lastIndex = i;
      const m = NUMBER_RE.exec(text);
      if (!m) fail('an invalid number');
      i += (m as RegExpExecArray)[0].length;
      return;
    }
    for (const literal of ['true', 'false', 'null']) {
      if (text.startsWith(literal, i)) {
        i += literal.length;
        return;
      }
    }
    if (i >= text.length) fail('the file ends where a value was expected');
    fail(`expected a value (a string, number, object, array, true, false or null), found ${describeAt(text, i)}`);
  };
  value(0);
  ws();
  if (i < text.length) fail(`more text after the end of the JSON value, starting with ${describeAt(text, i)}`);
}

/** The first syntax error of `text` with its line and column (1-based), or undefined when it is valid JSON. */
export function jsonSyntaxProblem(text: string): JsonSyntaxProblem | undefined {
  try {
    scan(text);
    return undefined;
  } catch (e) {
    if (!(e instanceof Stop)) throw e;
    return { ...lineColumn(text, e.offset), problem: e.problem };
  }
}
