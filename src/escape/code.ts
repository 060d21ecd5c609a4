/**
 * One escaping helper per code-generation target. User-supplied strings (project, plan,
 * endpoint and provider names, routes, URLs, rule ids from hand-written rules) reach
 * generated source and configuration; every generator writes them through the helper for
 * its target, never by string concatenation.
 *
 * Targets:
 * - JSON text  jsonEscaping (a JSON body that a template language reads before the client does)
 * - nginx      nginxComment, nginxString, nginxJsonString
 * - AWS        apiGatewayTemplateJson (an API Gateway gateway response's body template)
 * - Envoy      envoyFormatLiteral, envoyJsonFormat (substitution format strings, json_format)
 * - regex      regexLiteral (PCRE for nginx and Kong, RE2 for Envoy, Rust regex for Cloudflare)
 * - YAML       yamlComment for header comments; values go through the `yaml` package
 *              (toYaml), which quotes every scalar that needs it
 * - Prometheus promTemplateText (alert annotations are Go templates)
 * - Cloudflare cfString (a string literal in a rules-language expression), cfNormalizedPath (a
 *              route's path as the rules see a request's)
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

// ---------------------------------------------------------------- JSON read as a template

/**
 * JSON text for `value` in which each character of `chars` is written as its JSON \uXXXX
 * escape (U+2028 and U+2029 too, so the text is one line for every reader). None of `$ # %`
 * is JSON syntax, so they only ever stand inside strings, where the escape is the same
 * character to any JSON parser: a template language that reads the text first (nginx
 * variables, API Gateway's `$` substitution) finds none of them, and the client parses the
 * exact value. Only for characters outside JSON's own syntax (never `"`, `\`, braces).
 */
export function jsonEscaping(value: unknown, chars: string): string {
  const escaped = new Set([...chars, '\u2028', '\u2029']);
  let out = '';
  for (const c of JSON.stringify(value)) out += escaped.has(c) ? jsonCharEscape(c) : c;
  return out;
}

/** One BMP character as its JSON (and JavaScript) escape: `$` is \u0024. */
export function jsonCharEscape(c: string): string {
  return `\\u${(c.codePointAt(0) as number).toString(16).padStart(4, '0')}`;
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
 * variables: every `$` is written as the JSON escape \u0024 (jsonEscaping), so nginx sees no
 * variable and the client still parses the exact text.
 */
export function nginxJsonString(value: unknown): string {
  return nginxString(jsonEscaping(value, '$'));
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

// ---------------------------------------------------------------- AWS API Gateway

/**
 * The body template of an API Gateway gateway response (ResponseTemplates, in OpenAPI
 * x-amazon-apigateway-gateway-responses responseTemplates) that sends `value` as JSON.
 *
 * AWS documents these templates as not processed by the VTL engine but "supporting only simple
 * variable substitution" ($context..., ${stageVariables...}: "x-amazon-apigateway-gateway-
 * responses.responseTemplates object" and "Gateway responses for REST APIs", API Gateway
 * Developer Guide), and documents no escape for a literal `$` there. Velocity's own escapes do
 * not help either: `\$x` stays `\$x` when $x is undefined (Velocity User Guide, "Escaping Valid
 * VTL References"), and `#set($d = '$')` needs the VTL engine these templates do not run. So no
 * `$` may reach the template: every `$` goes as the JSON escape \u0024, and every `#` as
 * \u0023 (inert whether or not a `##` or `#set` would be read as VTL). The template then holds
 * no character either reading acts on, and the client parses the exact value; quotes,
 * backslashes and line breaks are JSON's own escapes, which neither reading touches.
 */
export function apiGatewayTemplateJson(value: unknown): string {
  return jsonEscaping(value, '$#');
}

// ---------------------------------------------------------------- Envoy

/**
 * Literal text in an Envoy substitution format string (json_format values, text_format): `%`
 * opens a command operator (%RESPONSE_CODE%), and a `%` that opens none makes Envoy refuse the
 * whole configuration ("Couldn't find valid command"). `%%` is a literal `%` (envoyproxy/envoy
 * #20093, opened February 2022 for issue #15159; source/common/formatter/substitution_formatter.cc,
 * "escape '%%'"), in every release from 1.24 on, which the Envoy file needs anyway. No other
 * character is special there.
 */
export function envoyFormatLiteral(value: string): string {
  return String(value).replace(/%/g, '%%');
}

/**
 * A json_format (an Envoy format dictionary) that writes exactly `value`: every string in it,
 * at any depth, is a format string (envoyFormatLiteral); keys, numbers and booleans are not
 * parsed. Envoy 1.24 and later keep numbers as numbers.
 */
export function envoyJsonFormat<T>(value: T): T {
  if (typeof value === 'string') return envoyFormatLiteral(value) as T;
  if (Array.isArray(value)) return value.map((v) => envoyJsonFormat(v)) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, envoyJsonFormat(v)])) as T;
  }
  return value;
}

// ---------------------------------------------------------------- Cloudflare

/**
 * A double-quoted string literal in a Cloudflare rules-language expression: `\\` and `\"` are
 * its escapes; a control character (which no request field holds) is written as a space. Spaces
 * are kept as they are: the literal says exactly the text it is given.
 */
export function cfString(value: string): string {
  return `"${String(value).replace(CONTROLS, ' ').replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** RFC 3986 unreserved characters, which Cloudflare's URL normalization decodes. */
const UNRESERVED = /[A-Za-z0-9\-._~]/;
/** RFC 3986 reserved characters (and `/`), which it leaves as they are, raw or percent-encoded. */
const RESERVED = /[:/?#[\]@!$&'()*+,;=]/;

/**
 * A route's path as Cloudflare's URL normalization hands it to rule expressions
 * (http.request.uri.path, "Normalize incoming URLs" on, the zone default): a percent-encoded
 * unreserved character decoded, every other percent escape in upper case, reserved characters
 * left as written, and anything else (a space, a non-ASCII letter, a quote) percent-encoded
 * from its UTF-8 bytes. A client cannot send a space in a path, so /my files arrives as
 * /my%20files, and the rule must say that to count it.
 */
export function cfNormalizedPath(route: string): string {
  let out = '';
  const text = String(route);
  for (let i = 0; i < text.length; ) {
    const c = text[i] as string;
    const hex = c === '%' ? /^%([0-9A-Fa-f]{2})/.exec(text.slice(i))?.[1] : undefined;
    if (hex !== undefined) {
      const char = String.fromCharCode(Number.parseInt(hex, 16));
      out += UNRESERVED.test(char) ? char : `%${hex.toUpperCase()}`;
      i += 3;
      continue;
    }
    const point = String.fromCodePoint(text.codePointAt(i) as number);
    out +=
      UNRESERVED.test(point) || RESERVED.test(point)
        ? point
        : [...new TextEncoder().encode(point)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
    i += point.length;
  }
  return out;
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
