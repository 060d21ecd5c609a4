/**
 * How a gateway reads the text of a 429 body before the client gets it, for the tests that read
 * the shipped files back: Envoy's substitution format strings, API Gateway's gateway response
 * templates. Each returns what the client receives, or throws where the gateway would put
 * something else in (or refuse the file).
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

/**
 * Whether an AWS WAF statement matches a request, as WAF evaluates the statements the AWS file
 * writes: And/Or/Not, a RegexMatch or an EXACTLY ByteMatch on the method or the URI path (the
 * path as WAF sees it: with the stage in front on the default endpoint), after the statement's
 * text transformations (NONE, LOWERCASE). Anything else throws.
 */
export function wafMatches(st: any, method: string, path: string): boolean {
  if (st.AndStatement) return st.AndStatement.Statements.every((x: any) => wafMatches(x, method, path));
  if (st.OrStatement) return st.OrStatement.Statements.some((x: any) => wafMatches(x, method, path));
  if (st.NotStatement) return !wafMatches(st.NotStatement.Statement, method, path);
  const leaf = st.RegexMatchStatement ?? st.ByteMatchStatement;
  if (!leaf) throw new Error(`unknown statement ${Object.keys(st).join()}`);
  let value: string | undefined = leaf.FieldToMatch.Method ? method : leaf.FieldToMatch.UriPath ? path : undefined;
  if (value === undefined) throw new Error(`unknown field ${Object.keys(leaf.FieldToMatch).join()}`);
  for (const t of leaf.TextTransformations) {
    if (t.Type === 'LOWERCASE') value = value.replace(/[A-Z]/g, (c: string) => c.toLowerCase());
    else if (t.Type !== 'NONE') throw new Error(`unknown transformation ${t.Type}`);
  }
  if (st.RegexMatchStatement) return new RegExp(leaf.RegexString).test(value);
  if (leaf.PositionalConstraint !== 'EXACTLY') throw new Error(`unknown positional constraint ${leaf.PositionalConstraint}`);
  return leaf.SearchString === value;
}

/** The names of an AWS file's WAF rate-based rules that count a request: no scope-down, or one that matches it. */
export function wafCountedNames(doc: any, method: string, path: string): string[] {
  return (doc.wafRateBasedRules as any[])
    .filter((r) => {
      const scope = r.Statement.RateBasedStatement.ScopeDownStatement;
      return scope === undefined || wafMatches(scope, method, path);
    })
    .map((r) => String(r.Name));
}
