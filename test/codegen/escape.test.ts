/**
 * One escaping helper per code-generation target, each fed the hostile strings and checked
 * to give an inert result that reads back exactly (where the target can read it back).
 */
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import {
  apiGatewayTemplateJson,
  cfString,
  envoyFormatLiteral,
  envoyJsonFormat,
  jsonEscaping,
  luaKeyFragment,
  luaString,
  nginxComment,
  nginxIdent,
  nginxJsonString,
  nginxString,
  promTemplateText,
  regexLiteral,
  toYaml,
  tsComment,
  tsString,
  yamlComment,
} from '../../src/escape/index.js';
import { apiGatewayTemplateRead, envoyFormatRead, envoyJsonFormatRead } from '../../src/codegen/gateway/reading.js';
import { EVIL, EVIL_ROUTE, TEMPLATE_DOCS_URL } from './support/hostile.js';

const HOSTILE = [
  EVIL,
  EVIL_ROUTE,
  'a;b{c}d"e\'f\ng$h#i*/j]]k',
  '$host',
  '${x}',
  '`backtick`',
  '*/ /* */',
  ']]=]',
  'line1\r\nline2\u2028line3\u2029end',
  '<script>alert(1)</script>',
  '\\ \\\\ \\"',
  '{{ .Labels.x }} {{{',
  '__proto__',
  'naïve café 日本 🚀',
  '',
  TEMPLATE_DOCS_URL,
  '%RESPONSE_CODE% %REQ(:path)% 100% %% %',
  '$context.requestId ${stageVariables.x} $util.escapeJavaScript("x") #set($d = "$") ## \\$x \\#if',
];

/** nginx's own unescaping of a quoted string (ngx_conf_read_token). */
function nginxUnquote(quoted: string): string {
  expect(quoted.startsWith('"') && quoted.endsWith('"')).toBe(true);
  const body = quoted.slice(1, -1);
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c === '\\' && i + 1 < body.length) {
      const n = body[i + 1]!;
      if (n === '"' || n === "'" || n === '\\') {
        out += n;
        i++;
        continue;
      }
      if (n === 't' || n === 'r' || n === 'n') throw new Error('nginx would turn \\' + n + ' into a control character');
    }
    // an unescaped quote would end the string early
    expect(c).not.toBe('"');
    out += c;
  }
  return out;
}

describe('nginx', () => {
  it('comments are one line', () => {
    for (const s of HOSTILE) expect(nginxComment(s)).not.toMatch(/[\r\n]/);
  });

  it('quoted strings read back exactly (control characters as spaces)', () => {
    for (const s of HOSTILE) {
      expect(nginxUnquote(nginxString(s))).toBe(s.replace(/[\u0000-\u001F\u007F-\u009F\u2028\u2029]+/g, ' '));
    }
  });

  it('JSON bodies hold no $ for nginx to expand, and parse back to the value', () => {
    for (const s of HOSTILE) {
      const value = { s, nested: [s, { s }] };
      const quoted = nginxJsonString(value);
      const text = nginxUnquote(quoted);
      expect(text).not.toContain('$');
      expect(JSON.parse(text)).toEqual(value);
    }
  });

  it('identifiers are letters, digits and underscores', () => {
    for (const s of HOSTILE) expect(nginxIdent(s)).toMatch(/^[A-Za-z0-9_]+$/);
  });
});

describe('JSON read as a template', () => {
  it('jsonEscaping writes the named characters as \\u escapes, and the text parses back to the value', () => {
    for (const s of HOSTILE) {
      const value = { s, nested: [s, { s }], n: 429 };
      const text = jsonEscaping(value, '$#%');
      expect(text).not.toMatch(/[$#%\u2028\u2029]/);
      expect(JSON.parse(text)).toEqual(value);
    }
  });

  it('an API Gateway body template holds no $ or #, and the client parses the exact value', () => {
    for (const s of HOSTILE) {
      const value = { documentation: s, limit: { rules: [s] }, status: 429 };
      expect(apiGatewayTemplateRead(apiGatewayTemplateJson(value))).toEqual(value);
    }
    // as plain JSON the same value would be read as template syntax
    expect(() => apiGatewayTemplateRead(JSON.stringify({ documentation: TEMPLATE_DOCS_URL }))).toThrow(/template syntax/);
  });
});

describe('Envoy format strings', () => {
  it('a literal reads back exactly, with no command operator in it', () => {
    for (const s of HOSTILE) expect(envoyFormatRead(envoyFormatLiteral(s))).toBe(s);
    expect(envoyFormatLiteral('50% off')).toBe('50%% off');
    expect(() => envoyFormatRead('50% off')).toThrow(/command operator/);
  });

  it('a json_format writes every string at any depth as written; numbers stay numbers', () => {
    for (const s of HOSTILE) {
      const value = { type: `${s}#x`, status: 429, limit: { rules: [s, 'a'] }, ok: true };
      const format = envoyJsonFormat(value);
      expect(format.status).toBe(429);
      expect(envoyJsonFormatRead(format)).toEqual(value);
    }
  });
});

describe('regexLiteral', () => {
  it('matches exactly the text, in every dialect the gateways use (checked with JS regex)', () => {
    for (const s of HOSTILE) {
      const re = new RegExp(`^${regexLiteral(s)}$`, 'u');
      expect(re.test(s)).toBe(true);
      expect(re.test(`${s}x`)).toBe(false);
      // nothing but word characters, /, -, \xHH escapes and non-ASCII text
      expect(regexLiteral(s)).toMatch(/^(?:[A-Za-z0-9/_-]|\\x[0-9a-f]{2}|[^\x00-\x7f])*$/u);
    }
    expect(new RegExp(`^${regexLiteral('/a.b')}$`).test('/aXb')).toBe(false);
  });
});

describe('YAML', () => {
  it('toYaml keeps every hostile value one string, readable by YAML 1.1 and 1.2 parsers', () => {
    const value = {
      list: HOSTILE,
      map: Object.fromEntries(HOSTILE.map((s, i) => [`k${i}`, s])),
      words: ['on', 'off', 'yes', 'no', 'y', 'n', 'OFF', '1', '0x1f', '~', ':path'],
    };
    const text = toYaml(value, HOSTILE);
    expect(parseYaml(text)).toEqual(value);
    expect(parseYaml(text, { version: '1.1' })).toEqual(value);
    // the header is comment lines (and blank lines), one per non-empty entry, then the data
    const lines = text.split('\n');
    const first = lines.findIndex((l) => l !== '' && !l.startsWith('#'));
    expect(lines[first]).toMatch(/^list:/);
    expect(lines.slice(0, first).filter((l) => l.startsWith('#'))).toHaveLength(HOSTILE.filter((h) => yamlComment(h) !== '').length);
  });

  it('comments are one line', () => {
    for (const s of HOSTILE) expect(yamlComment(s)).not.toMatch(/[\r\n\u2028\u2029]/);
  });
});

describe('Prometheus annotations', () => {
  it('never open a Go template action', () => {
    for (const s of HOSTILE) {
      const t = promTemplateText(s);
      // every {{ is the literal-printing action {{ "{{" }}
      expect(t.replace(/\{\{ "\{\{" \}\}/g, '')).not.toContain('{{');
    }
  });
});

describe('Cloudflare expressions', () => {
  it('string literals have no unescaped quote', () => {
    for (const s of HOSTILE) {
      const lit = cfString(s);
      expect(lit.slice(1, -1).replace(/\\\\/g, '').replace(/\\"/g, '')).not.toContain('"');
    }
  });
});

describe('TypeScript', () => {
  it('tsString is a literal that evaluates to the same text', () => {
    for (const s of HOSTILE) {
      const lit = tsString(s);
      expect(lit).not.toMatch(/[\r\n\u2028\u2029<>]/);
      expect(new Function(`return ${lit};`)()).toBe(s);
    }
  });

  it('tsComment cannot end or open a comment', () => {
    for (const s of HOSTILE) {
      const c = tsComment(s);
      expect(c).not.toContain('*/');
      expect(c).not.toContain('/*');
      expect(c).not.toMatch(/[\r\n\u2028\u2029]/);
      // it really stays inside a block comment
      expect(new Function(`/* ${c} */ return 1;`)()).toBe(1);
      expect(new Function(`// ${c}\nreturn 2;`)()).toBe(2);
    }
  });
});

describe('Lua and Redis keys', () => {
  it('luaString is a plain double-quoted literal (no long brackets, no raw newline)', () => {
    for (const s of HOSTILE) {
      const lit = luaString(s);
      expect(lit).toMatch(/^"(?:[\x20-\x21\x23-\x5b\x5d-\x7e]|\\["\\]|\\\d{3})*"$/);
      // decode the Lua escapes back to bytes
      const bytes: number[] = [];
      const body = lit.slice(1, -1);
      for (let i = 0; i < body.length; i++) {
        if (body[i] === '\\') {
          if (/\d/.test(body[i + 1]!)) {
            bytes.push(Number(body.slice(i + 1, i + 4)));
            i += 3;
          } else {
            bytes.push(body.charCodeAt(i + 1));
            i += 1;
          }
        } else bytes.push(body.charCodeAt(i));
      }
      expect(Buffer.from(bytes).toString('utf8')).toBe(s);
    }
  });

  it('key fragments keep hash tags and segments intact, and are one-to-one', () => {
    const seen = new Map<string, string>();
    for (const s of [...HOSTILE, '%', '%25', 'a:b', 'a%3Ab', '{t}', 'é', 'e\u0301']) {
      const f = luaKeyFragment(s);
      expect(f).toMatch(/^[A-Za-z0-9._~%-]*$/);
      expect(decodeURIComponent(f)).toBe(s);
      expect(seen.get(f) ?? s).toBe(s);
      seen.set(f, s);
    }
  });
});
