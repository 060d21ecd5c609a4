/**
 * One escaping helper per code-generation target. User-supplied strings (project, plan,
 * endpoint and provider names, routes, URLs, rule ids from hand-written rules) reach
 * generated source and configuration; every generator writes them through the helper for
 * its target, never by string concatenation.
 *
 * Targets:
 * - nginx      nginxComment, nginxString, nginxJsonString
 * - regex      regexLiteral (PCRE for nginx and Kong, RE2 for Envoy, Rust regex for Cloudflare)
 * - YAML       yamlComment for header comments; values go through the `yaml` package
 *              (toYaml), which quotes every scalar that needs it
 * - Prometheus promTemplateText (alert annotations are Go templates)
 * - Cloudflare cfString (a string literal in a rules-language expression)
 * - names      gatewayName (Kong route/plugin names and tags, AWS WAF rule names)
 * - TypeScript tsString, tsComment
 * - Lua/Redis  luaString (a Lua string literal), luaKeyFragment (a piece of a Redis key)
 *
 * All helpers are pure and total: any string gives an inert, well-formed result.
 */
import { Document, Scalar, visit, type ToStringOptions } from 'yaml';

/** C0/C1 controls, DEL, and the Unicode line and paragraph separators. */
const CONTROLS = /[\u0000-\u001F\u007F-\u009F\u2028\u2029]+/g;

/** One line of plain text: every control character and line break becomes one space. */
export function oneLine(value: string): string {
  return String(value).replace(CONTROLS, ' ').replace(/ {2,}/g, ' ').trim();
}

// ---------------------------------------------------------------- nginx

/**
 * Text for an nginx `# comment`. nginx ends a comment only at a line feed, so collapsing
 * line breaks is enough; `{`, `}`, `;`, quotes and `$` are inert inside a comment.
 */
export function nginxComment(value: string): string {
  return oneLine(value);
}

/**
 * A double-quoted nginx string (quotes included) whose text nginx reads back exactly.
 * nginx unescapes `\\`, `\"` and `\'` inside quotes; control characters are written as
 * spaces. Use it only where nginx does not expand variables (map keys, regexes,
 * zone names): in directives that take variables (`return`, `add_header`) a `$` has no
 * escape in nginx; use nginxJsonString for those bodies, or keep `$` out.
 */
export function nginxString(value: string): string {
  const text = String(value).replace(CONTROLS, ' ');
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/**
 * A JSON value as a quoted nginx string for `return <code> "..."`, where nginx expands
 * variables: every `$` is written as the JSON escape \u0024, so nginx sees no variable and
 * the client still parses the exact text.
 */
export function nginxJsonString(value: unknown): string {
  const json = JSON.stringify(value)
    .replace(/\$/g, '\\u0024')
    .replace(/[\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
  return nginxString(json);
}

/** An identifier nginx accepts in zone and variable names: letters, digits, underscore. */
export function nginxIdent(value: string): string {
  const s = String(value).replace(/[^A-Za-z0-9_]/g, '_');
  return s.length > 0 ? s : '_';
}

// ---------------------------------------------------------------- regex

/**
 * A string as a regex that matches exactly that text, in every regex dialect the gateways
 * use (PCRE, RE2, Rust regex): letters, digits, `/`, `_` and `-` stay, every other ASCII
 * character becomes `\xHH` (a metacharacter, a quote, `$`, `{`, a newline: all inert), and
 * non-ASCII characters stay literal (they mean nothing to any of these dialects).
 */
export function regexLiteral(value: string): string {
  let out = '';
  for (const ch of String(value)) {
    const code = ch.codePointAt(0) as number;
    if (/^[A-Za-z0-9/_-]$/.test(ch) || code > 0x7f) {
      out += ch;
    } else {
      out += `\\x${code.toString(16).padStart(2, '0')}`;
    }
  }
  return out;
}

// ---------------------------------------------------------------- YAML

/** Text for a `#` comment line in YAML (header comments; values go through toYaml). */
export function yamlComment(value: string): string {
  return oneLine(value);
}

const YAML_OPTIONS: ToStringOptions = { lineWidth: 0, minContentWidth: 0, indent: 2 };

/**
 * A YAML document from plain data, with an optional header comment (one `#` line per
 * entry). The `yaml` package quotes every scalar that needs it (`#`, `:`, quotes, leading
 * `*`/`&`/`!`, newlines, `{`...), so user text stays one string value.
 */
export function toYaml(value: unknown, header: readonly string[] = []): string {
  // YAML 1.1 quoting rules: also quotes on/off/yes/no/y/n, which 1.1 parsers read as booleans
  const doc = new Document(value, { version: '1.1' });
  visit(doc, {
    Scalar(_key, node) {
      // ":path" is a valid plain scalar, but some parsers disagree: quote it
      if (typeof node.value === 'string' && node.value.startsWith(':')) node.type = Scalar.QUOTE_DOUBLE;
    },
  });
  if (header.length > 0) doc.commentBefore = header.map((l) => ` ${yamlComment(l)}`.trimEnd()).join('\n');
  return doc.toString(YAML_OPTIONS);
}

// ---------------------------------------------------------------- gateway names

/**
 * A name for Kong entities (route and plugin instance names, tags) and AWS WAF rule names:
 * letters, digits and `. _ ~ -` only (the intersection those schemas accept); anything else
 * becomes `_`. Never empty.
 */
export function gatewayName(value: string, maxLength = 128): string {
  const s = String(value)
    .replace(/[^A-Za-z0-9._~-]/g, '_')
    .slice(0, maxLength);
  return s.length > 0 ? s : '_';
}

// ---------------------------------------------------------------- Prometheus

/**
 * Text for a Prometheus alert annotation (a Go template): `{{` would open an action, so it
 * is written as the template `{{ "{{" }}`, which prints the two braces. Line breaks stay
 * out (annotations are one-line summaries here).
 */
export function promTemplateText(value: string): string {
  return oneLine(value).replace(/\{\{/g, '{{ "{{" }}');
}

// ---------------------------------------------------------------- Cloudflare

/** A double-quoted string literal in a Cloudflare rules-language expression. */
export function cfString(value: string): string {
  return `"${oneLine(value).replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

// ---------------------------------------------------------------- TypeScript

/**
 * A TypeScript (and JavaScript) string literal for any text: JSON's escaping, plus U+2028,
 * U+2029, `<` and `>` as \u escapes, so the literal is always one line and stays inert when
 * the file is embedded in HTML or a Markdown fence. Backticks, `${`, quotes, backslashes and
 * newlines are all inert inside a double-quoted literal.
 */
export function tsString(value: string): string {
  return JSON.stringify(String(value)).replace(/[\u2028\u2029<>]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * Text for a TypeScript comment (`//` line or block comment): one line, `*` + `/` cannot
 * close a block comment early and `/` + `*` cannot open one, `<` `>` become look-alikes so no
 * markup survives into an HTML embedding, capped at `maxLength`.
 */
export function tsComment(value: string, maxLength = 200): string {
  const text = String(value)
    // every line terminator and every other control character becomes one space
    .replace(/[\u0000-\u001F\u007F-\u009F\u2028\u2029]+/g, ' ')
    .replace(/\*\//g, '* /')
    .replace(/\/\*/g, '/ *')
    // angle brackets become look-alikes, so no markup survives into an HTML embedding
    .replace(/</g, '\u2039')
    .replace(/>/g, '\u203a')
    .replace(/ {2,}/g, ' ')
    .trim();
  // cutting may not leave a '*' right before the comment's own closing '*/'
  return text.length > maxLength ? `${text.slice(0, maxLength - 3).replace(/[*/]+$/, '')}...` : text;
}

// ---------------------------------------------------------------- Lua / Redis

/**
 * A double-quoted Lua string literal for any text: backslash, quote and every byte
 * outside printable ASCII as a decimal escape, so neither `]]` nor a newline can end it.
 */
export function luaString(value: string): string {
  let out = '"';
  for (const byte of Buffer.from(String(value), 'utf8')) {
    if (byte === 0x22 || byte === 0x5c) out += `\\${String.fromCharCode(byte)}`;
    else if (byte >= 0x20 && byte < 0x7f) out += String.fromCharCode(byte);
    else out += `\\${String(byte).padStart(3, '0')}`;
  }
  return `${out}"`;
}

/** Characters a Redis key fragment keeps as they are; everything else is %-encoded. */
const KEY_SAFE = /^[A-Za-z0-9._~-]$/;

/**
 * A piece of a Redis key built from a user value (an identity, a provider name). `{` and
 * `}` would move the key's Redis Cluster hash tag and `:` would fake a key segment, so
 * every character outside `A-Z a-z 0-9 . _ ~ -` is percent-encoded as UTF-8 (`%` itself
 * included): the mapping is one-to-one and the result is plain ASCII.
 */
export function luaKeyFragment(value: string): string {
  let out = '';
  for (const ch of String(value)) {
    if (KEY_SAFE.test(ch)) out += ch;
    else for (const byte of Buffer.from(ch, 'utf8')) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}
