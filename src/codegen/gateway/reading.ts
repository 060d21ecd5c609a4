/**
 * How a gateway reads the text of a 429 body before the client gets it: nginx's quoted `return`
 * text, Envoy's substitution format strings, API Gateway's gateway response templates. Each
 * returns what the client receives, or throws where the gateway would put something else in (or
 * refuse the file). validate reads the shipped files' bodies through these (shippedEdgeBodies),
 * and the tests read the generated files back through the same code.
 */

/**
 * Envoy's reading of a substitution format string (source/common/formatter/
 * substitution_formatter.cc, SubstitutionFormatParser::parse): `%%` is one literal `%` (the
 * releases the file needs); any other `%` opens a command operator, which Envoy substitutes, or refuses
 * the configuration when none follows. Literal text only: a command throws.
 */
export function envoyFormatRead(format: string): string {
  let out = '';
  for (let i = 0; i < format.length; i++) {
    const c = format[i] as string;
    if (c !== '%') out += c;
    else if (format[i + 1] === '%') {
      out += '%';
      i++;
    } else {
      throw new Error(`Envoy reads a command operator (or refuses the file) at ${i} of ${JSON.stringify(format)}`);
    }
  }
  return out;
}

/** What an Envoy json_format writes: each string in it read as a format string (envoyFormatRead), the rest as is. */
export function envoyJsonFormatRead(value: unknown): unknown {
  if (typeof value === 'string') return envoyFormatRead(value);
  if (Array.isArray(value)) return value.map(envoyJsonFormatRead);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, envoyJsonFormatRead(v)]));
  }
  return value;
}

/**
 * The JSON a client receives from an API Gateway gateway response template. AWS substitutes
 * `$` references there ($context..., ${stageVariables...}) and documents no escape for a literal
 * `$`; were the template read as VTL, `#` would start comments (`##`) and directives (`#set`).
 * So a template holding either character is not sent as written: that throws.
 */
export function apiGatewayTemplateRead(template: string): unknown {
  const at = template.search(/[$#]/);
  if (at >= 0) throw new Error(`API Gateway reads ${JSON.stringify(template.slice(at, at + 20))} in the template as template syntax`);
  return JSON.parse(template);
}

/** The text nginx sends for a quoted `return` string's value: it expands `$` variables, so none may be left. */
export function nginxReturnRead(text: string): string {
  const at = text.indexOf('$');
  if (at >= 0) throw new Error(`nginx expands ${JSON.stringify(text.slice(at, at + 20))} in the return text as a variable`);
  return text;
}

/** An nginx directive as nginx reads it: its name, its arguments (quotes removed, escapes read) and its block, if any. */
export interface NginxDirective {
  name: string;
  args: string[];
  block?: NginxDirective[];
}

/** nginx's escapes inside a quoted argument (ngx_conf_read_token): \", \', \\ and \t, \r, \n. */
const NGINX_ESCAPES: Readonly<Record<string, string>> = { '"': '"', "'": "'", '\\': '\\', t: '\t', r: '\r', n: '\n' };

/**
 * The directives of an nginx configuration file as nginx tokenises it: `#` opens a comment to the
 * end of the line outside quotes only, a quoted argument keeps spaces, braces and semicolons, and
 * a backslash escape is read as nginx reads it. Throws on text nginx would refuse (an unclosed
 * quote or block, a stray `}`).
 */
export function nginxDirectives(text: string): NginxDirective[] {
  const root: NginxDirective[] = [];
  const stack: NginxDirective[][] = [root];
  let words: string[] = [];
  let i = 0;
  const end = (): void => {
    const [name, ...args] = words;
    if (name === undefined) throw new Error(`nginx reads an empty directive at ${i}`);
    (stack[stack.length - 1] as NginxDirective[]).push({ name, args });
    words = [];
  };
  while (i < text.length) {
    const c = text[i] as string;
    if (/\s/.test(c)) i++;
    else if (c === '#') {
      const nl = text.indexOf('\n', i);
      i = nl < 0 ? text.length : nl;
    } else if (c === ';') {
      end();
      i++;
    } else if (c === '{') {
      const [name, ...args] = words;
      if (name === undefined) throw new Error(`nginx reads a block without a directive at ${i}`);
      const block: NginxDirective[] = [];
      (stack[stack.length - 1] as NginxDirective[]).push({ name, args, block });
      stack.push(block);
      words = [];
      i++;
    } else if (c === '}') {
      if (words.length > 0 || stack.length === 1) throw new Error(`nginx reads an unexpected "}" at ${i}`);
      stack.pop();
      i++;
    } else if (c === '"' || c === "'") {
      let value = '';
      let j = i + 1;
      for (; j < text.length && text[j] !== c; j++) {
        const next = text[j + 1] as string;
        if (text[j] === '\\' && next !== undefined && Object.hasOwn(NGINX_ESCAPES, next)) {
          value += NGINX_ESCAPES[next];
          j++;
        } else value += text[j];
      }
      if (j >= text.length) throw new Error(`nginx reads an unclosed quote from ${i}`);
      words.push(value);
      i = j + 1;
    } else {
      let j = i;
      while (j < text.length && !/[\s;{}]/.test(text[j] as string)) j++;
      words.push(text.slice(i, j));
      i = j;
    }
  }
  if (words.length > 0 || stack.length > 1) throw new Error('nginx reads the file as ending inside a directive or block');
  return root;
}
