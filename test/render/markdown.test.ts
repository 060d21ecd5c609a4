import { readdirSync, readFileSync } from 'node:fs';
import { Lexer, marked, type Token, type Tokens } from 'marked';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fmtBytes, fmtDuration, fmtNumber } from '../../src/render/format.js';
import { headings } from '../../src/render/links.js';
import { chooseLayout, documentStats, LAYOUT_THRESHOLDS, renderMarkdown } from '../../src/render/markdown/index.js';
import { planSections } from '../../src/render/sections/index.js';
import { answersOf, EXAMPLES, exampleInput, inputFromAnswers } from './fixtures.js';

function single(name: string): string {
  const files = renderMarkdown(exampleInput(name), { layout: 'single' });
  expect(files.map((f) => f.path)).toEqual(['rate-limit-design.md']);
  return files[0]?.content ?? '';
}

function tokensOf(markdown: string): Token[] {
  const all: Token[] = [];
  marked.walkTokens(Lexer.lex(markdown, { gfm: true }), (t) => {
    all.push(t);
  });
  return all;
}

/** The tables of a document whose header row starts with the given cells. */
function tables(markdown: string, ...header: string[]): Tokens.Table[] {
  return Lexer.lex(markdown, { gfm: true }).filter(
    (t): t is Tokens.Table => t.type === 'table' && header.every((h, i) => (t as Tokens.Table).header[i]?.text === h),
  );
}

const cellText = (cell: Tokens.TableCell | undefined): string =>
  (cell?.tokens ?? []).map((t) => (t.type === 'codespan' ? (t as Tokens.Codespan).text : t.raw)).join('');

describe.each(EXAMPLES)('example %s, single file', (name) => {
  const input = exampleInput(name);
  const { design } = input;
  const doc = single(name);

  it('keeps the matrix to its key columns and gives every rule its details, linked from its row', () => {
    const [matrix] = tables(doc, 'Rule', 'Applies to');
    expect(matrix).toBeDefined();
    const columns = matrix?.header.map((h) => h.text) ?? [];
    expect(columns).toEqual(['Rule', 'Applies to', 'Identity', 'Rate and burst', 'Fail mode', 'Layer']);
    expect(matrix?.rows).toHaveLength(design.rules.length);
    const anchors = headings(doc).map((h) => h.anchor);
    design.rules.forEach((rule, i) => {
      const row = matrix?.rows[i] ?? [];
      const cell = (column: string): string => cellText(row[columns.indexOf(column)]);
      for (const column of columns) expect(cell(column), `${rule.id} ${column}`).not.toMatch(/^$|not stated/);
      expect(row[0]?.text).toBe(`[\`${rule.id}\`](#rule-${rule.id})`);
      expect(anchors).toContain(`rule-${rule.id}`);
      expect(cell('Rate and burst')).toContain(fmtNumber(rule.rate?.requests ?? NaN));
      expect(cell('Rate and burst')).toContain(rule.burst === null ? 'no burst (window)' : `burst ${fmtNumber(rule.burst ?? NaN)}`);
      expect(cell('Fail mode')).toBe(`fail ${rule.failMode}`);
      // the details: everything the table leaves out
      const details = doc.slice(doc.indexOf(`#### Rule \`${rule.id}\``)).split('\n#### ')[0] ?? '';
      expect(details).not.toMatch(/not stated/);
      expect(details).toContain(`**Key pattern:** \`${rule.key}\``);
      // a field of an identity's hash also says how long the hash itself lives: its longest field
      const hashTtl = Math.max(...design.rules.filter((r) => rule.field !== undefined && r.key === rule.key).map((r) => r.ttlSeconds ?? 0));
      expect(details).toContain(
        rule.field !== undefined && hashTtl > (rule.ttlSeconds ?? 0)
          ? `**TTL:** ${fmtDuration(rule.ttlSeconds ?? NaN)} for its field; the hash lives as long as its longest field, ${fmtDuration(hashTtl)}.`
          : `**TTL:** ${fmtDuration(rule.ttlSeconds ?? NaN)}.`,
      );
      expect(details).toContain(`**Burst:** ${rule.burst === null ? 'none (window)' : fmtNumber(rule.burst ?? NaN)}.`);
      expect(details).toContain(`**Cost:** ${fmtNumber(rule.cost?.default ?? NaN)}`);
      expect(details).toContain(`**Cardinality bound:** ${fmtNumber(rule.cardinality?.bound ?? NaN)} key`);
      for (const w of rule.cost?.byEndpoint ?? []) expect(details).toContain(`${w.endpoint} = ${w.cost}`);
      expect(details.replace(/\s+/g, ' ')).toContain(rule.rationale.replace(/\s+/g, ' ').slice(0, 40));
    });
  });

  it('gives every rule its rationale and states the memory estimate', () => {
    for (const rule of design.rules) expect(doc).toContain(`#### Rule \`${rule.id}\``);
    expect(doc).toContain(`**${fmtNumber(design.monitoring.store.estimatedKeys)}**`);
    // the rules bounded by the ceiling: counted once for the worst endpoint, and said so
    const shared = design.monitoring.store.sharedCeiling;
    if (shared) {
      expect(doc.replace(/\s+/g, ' ')).toContain(
        `they hold at most ${fmtNumber(shared.keys)} keys (${fmtBytes(shared.bytes)}), ${shared.endpoint ? `reached when all traffic under the ceiling goes to \`${shared.endpoint}\`` : 'with each request sent where it leaves the most for its age'}, not the ${fmtNumber(shared.rowKeys)} of their rows added up`,
      );
    } else expect(doc).not.toContain('of their rows added up');
  });

  it('numbers the present sections without gaps, in the contents and the headings', () => {
    const h2 = headings(doc).filter((h) => h.level === 2);
    expect(h2[0]?.text).toBe('Contents');
    const numbered = h2.slice(1).map((h) => h.text);
    const plan = planSections(input);
    expect(numbered).toEqual(plan.map((p) => p.heading));
    numbered.forEach((text, i) => expect(text.startsWith(`${i + 1}. `)).toBe(true));
    expect(numbered.some((t) => t.endsWith('. Quotas'))).toBe(design.quotas !== undefined);
    expect(numbered.some((t) => t.endsWith('. Outbound limits'))).toBe(design.outbound !== undefined);
    expect(numbered.at(-1)).toMatch(/\. Constraint check$/);
    for (const p of plan) expect(doc).toContain(`- [${p.heading}](#${p.anchor})`);
  });

  it('has a title, the generation date, every assumption and the generic notice only when generic', () => {
    expect(doc.startsWith(`# Rate-limit design: ${design.scope.projectName}\n`)).toBe(true);
    expect(doc).toContain(`on ${design.meta.date}.`);
    for (const a of design.assumptions) expect(doc).toContain(`- \`${a.field}\`: `);
    expect(doc.includes('**Generic design.**')).toBe(design.meta.generic);
  });

  it('embeds diagrams as mermaid blocks only when the design has them', () => {
    const code = tokensOf(doc).filter((t): t is Tokens.Code => t.type === 'code');
    const mermaid = code.filter((c) => c.lang === 'mermaid');
    expect(mermaid.some((c) => c.text.startsWith('flowchart'))).toBe(design.enforcement.placementDiagram !== undefined);
    expect(mermaid.some((c) => c.text.startsWith('stateDiagram-v2'))).toBe(design.outbound?.circuitDiagram !== undefined);
    // the example 429s: whole responses (status line, headers, blank line, problem+json body)
    const responses = code.filter((c) => c.lang === 'http').map((c) => c.text.split('\n\n'));
    const bodies = responses.map(([, body]) => JSON.parse(body ?? '') as unknown);
    expect(bodies[0]).toEqual(design.contract.rateLimitedBody);
    // plus the edge 429 the generated nginx returns, when nginx enforces rules
    const edge = design.scope.gateway === 'nginx' && design.rules.some((r) => r.layer === 'edge') ? 1 : 0;
    // and the deny list's and penalty box's responses, when the design has them
    const access = (design.access?.deny ? 1 : 0) + (design.access?.penalty ? 1 : 0);
    // and a soft quota's refusal at its hard stop, when another quota's is the first example
    const overage = design.contract.overageExceededBody ? 1 : 0;
    expect(bodies.length).toBe((design.contract.quotaExceededBody ? 2 : 1) + overage + edge + access);
    if (overage) expect(bodies).toContainEqual(design.contract.overageExceededBody);
    expect(responses[0]?.[0]?.split('\n')).toEqual([
      'HTTP/1.1 429 Too Many Requests',
      ...(design.contract.rateLimitedExample?.headers ?? []).map((h) => `${h.name}: ${h.value}`),
    ]);
  });

  it('states the header convention with its draft version, and every constraint verdict', () => {
    expect(doc).toContain(design.contract.specReference);
    const [checks] = tables(doc, '#', 'Constraint', 'Verdict');
    expect(checks?.rows).toHaveLength(9);
    expect(checks?.rows.map((r) => r[2]?.text)).toEqual(
      input.checks.map((c) => (c.passed ? (c.applicable ? 'pass' : 'pass (does not apply)') : '**FAIL**')),
    );
  });

  it('is deterministic: same input, same bytes, whatever the clock says', () => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date('2031-07-04T12:00:00Z'));
    const again = renderMarkdown(exampleInput(name), { layout: 'single' })[0]?.content;
    vi.useRealTimers();
    expect(again).toBe(doc);
    expect(renderMarkdown(exampleInput(name), { layout: 'folder' })).toEqual(renderMarkdown(exampleInput(name), { layout: 'folder' }));
  });
});

describe('options and variants', () => {
  afterEach(() => vi.useRealTimers());

  it('names the single file after baseName and refuses a path', () => {
    expect(renderMarkdown(exampleInput('minimal-generic'), { layout: 'single', baseName: 'limits' })[0]?.path).toBe('limits.md');
    expect(renderMarkdown(exampleInput('minimal-generic'), { layout: 'single', baseName: 'limits.md' })[0]?.path).toBe('limits.md');
    expect(() => renderMarkdown(exampleInput('minimal-generic'), { layout: 'single', baseName: '../x' })).toThrow();
  });

  it('prints the Lua, the gateway files and the rules in the enforcement section, and links the runtimes with size and purpose', () => {
    const input = exampleInput('saas-platform');
    const lua = '-- a comment with ``` backticks\nreturn redis.call("TIME")\n';
    const data = [
      '// header',
      "import type { DesignData } from './types.js';",
      'export const DESIGN: DesignData = {',
      '  project: "x",',
      '  rules: [',
      '    // a: the rule',
      '    { id: "a" },',
      '  ],',
      '};',
      '',
    ].join('\n');
    const runtime = ['export function createLimiter() {', '  return "RUNTIME BODY";', '}', ''].join('\n');
    const files = renderMarkdown(
      {
        ...input,
        codeFiles: [
          { path: 'lua/gcra.lua', language: 'lua', content: lua, description: 'GCRA script' },
          { path: 'gateway/nginx.conf', language: 'nginx', content: 'limit_req zone=global;' },
          { path: 'middleware/design.ts', language: 'typescript', content: data, description: 'the design data' },
          { path: 'middleware/limiter.ts', language: 'typescript', content: runtime, description: 'the limiter' },
          { path: 'README.md', language: 'markdown', content: '# list\n' },
        ],
        codeHref: { single: '../ratelimit', folder: '../../ratelimit' },
      },
      { layout: 'single' },
    );
    const doc = files[0]?.content ?? '';
    const code = tokensOf(doc).filter((t): t is Tokens.Code => t.type === 'code');
    expect(code.find((c) => c.lang === 'lua')?.text).toBe(lua.trimEnd());
    expect(code.find((c) => c.lang === 'nginx')?.text).toBe('limit_req zone=global;');
    // the rules, not the runtime around them
    expect(code.find((c) => c.lang === 'typescript')?.text).toBe('  rules: [\n    // a: the rule\n    { id: "a" },\n  ],');
    expect(doc).not.toContain('RUNTIME BODY');
    expect(doc).toContain("The design's rules, from `middleware/design.ts` (lines 5-8):");
    expect(doc).toContain('`lua/gcra.lua`: GCRA script.');
    const enforcement = doc.slice(doc.indexOf('## 4. Enforcement'), doc.indexOf('## 5. '));
    expect(enforcement).toContain('````lua');
    // every file linked from the single file's folder, with its size; the code README is not a page of the document
    const [list] = tables(enforcement, 'File', 'Size', 'What it does');
    expect(list?.rows.map((r) => r[0]?.text)).toEqual([
      '[`lua/gcra.lua`](../ratelimit/lua/gcra.lua)',
      '[`gateway/nginx.conf`](../ratelimit/gateway/nginx.conf)',
      '[`middleware/design.ts`](../ratelimit/middleware/design.ts)',
      '[`middleware/limiter.ts`](../ratelimit/middleware/limiter.ts)',
    ]);
    expect(list?.rows[3]?.[1]?.text).toBe('3 lines, 61 bytes');
    expect(list?.rows[3]?.[2]?.text).toBe('the limiter');
    // the folder layout links from one level further down
    const folder = renderMarkdown(
      {
        ...input,
        codeFiles: [{ path: 'lua/gcra.lua', language: 'lua', content: lua }],
        codeHref: { single: 'x', folder: '../../ratelimit' },
      },
      { layout: 'folder' },
    );
    expect(folder.map((f) => f.content).join('\n')).toContain('[`lua/gcra.lua`](../../ratelimit/lua/gcra.lua)');
    // a code folder whose name needs encoding is linked, and the link checker accepts it
    const spaced = renderMarkdown(
      {
        ...input,
        codeFiles: [{ path: 'lua/gcra.lua', language: 'lua', content: lua }],
        codeHref: { single: '../rate limit', folder: 'x' },
      },
      { layout: 'single' },
    );
    expect(spaced[0]?.content).toContain('[`lua/gcra.lua`](../rate%20limit/lua/gcra.lua)');
  });

  it('shows what a broken hand-written rule leaves out, and the failing constraints with the rule id', () => {
    const answers = answersOf('minimal-generic') as Record<string, unknown>;
    answers.rules = [
      {
        id: 'no-ttl',
        endpointClass: 'read',
        identity: 'user',
        algorithm: 'token-bucket',
        key: 'rl:x',
        rate: { requests: 5, per: 'second' },
        failMode: 'open',
        layer: 'middleware',
      },
    ];
    const doc = renderMarkdown(inputFromAnswers(answers), { layout: 'single' })[0]?.content ?? '';
    const [matrix] = tables(doc, 'Rule', 'Applies to');
    const row = matrix?.rows.find((r) => r[0]?.text.includes('`no-ttl`')) ?? [];
    // the runtime runs a bucket without a burst with its rate as the burst: the document says both
    expect(cellText(row[3])).toBe('5 / 1 s, burst 5 (the rate: none stated)');
    const details = doc.slice(doc.indexOf('#### Rule `no-ttl`')).split('\n#### ')[0] ?? '';
    for (const field of ['TTL', 'Cost', 'Cardinality bound']) expect(details).toContain(`**${field}:** **not stated**`);
    expect(details).toContain('**Burst:** 5 (the rate: none stated)');
    expect(details).toContain('**Algorithm:** token bucket, run as GCRA');
    const [checks] = tables(doc, '#', 'Constraint', 'Verdict');
    const failing = checks?.rows.filter((r) => r[2]?.text === '**FAIL**').map((r) => [r[0]?.text, cellText(r[3])]);
    expect(failing).toEqual([
      ['1', 'no-ttl'],
      ['2', 'no-ttl'],
      ['6', 'no-ttl'],
    ]);
    expect(doc).toContain('- Constraint 6: rule no-ttl: The rule sets no TTL on its keys');
  });

  it('shows scenario results once verify has written them', () => {
    const input = exampleInput('consumer-auth');
    const scenarios = input.design.scenarios.map((s, i) =>
      i === 0
        ? { ...s, result: { passed: true, detail: 'All 20 admitted, the 21st refused.', redisVersion: '7.2.4', date: '2025-01-02' } }
        : s,
    );
    const doc = renderMarkdown({ ...input, design: { ...input.design, scenarios } }, { layout: 'single' })[0]?.content ?? '';
    expect(doc).toContain('Result: **passed** on Redis 7.2.4, 2025-01-02. All 20 admitted, the 21st refused.');
    expect(doc).not.toContain('Results appear here once');
  });
});

describe('chooseLayout', () => {
  const t = LAYOUT_THRESHOLDS;
  it.each([
    [{ lines: t.maxLines + 1, bytes: 10, sections: 3 }, 'folder'],
    [{ lines: 10, bytes: t.maxBytes + 1, sections: 3 }, 'folder'],
    [{ lines: t.maxLines, bytes: t.maxBytes, sections: 6 }, 'single'],
    [{ lines: t.minLinesForSections + 1, bytes: 1000, sections: 7 }, 'folder'],
    [{ lines: t.minLinesForSections, bytes: 1000, sections: 11 }, 'single'],
    [{ lines: 1400, bytes: 90_000, sections: 6 }, 'single'],
  ] as const)('%j -> %s', (stats, expected) => {
    expect(chooseLayout(stats)).toBe(expected);
  });

  it('measures lines and UTF-8 bytes', () => {
    expect(documentStats('a\nü\n', 2)).toEqual({ lines: 2, bytes: 5, sections: 2 });
  });

  it.each([
    ['saas-platform', 'folder'],
    ['consumer-auth', 'single'],
    ['minimal-generic', 'single'],
  ])('auto renders %s as %s', (name, layout) => {
    const files = renderMarkdown(exampleInput(name), { layout: 'auto' });
    expect(files.length > 1 ? 'folder' : 'single').toBe(layout);
  });
});

describe('the renderer source', () => {
  it('never reads the clock or the locale', () => {
    const dir = new URL('../../src/render/', import.meta.url);
    const sources = (readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts'));
    expect(sources.length).toBeGreaterThan(5);
    for (const file of sources) {
      const text = readFileSync(new URL(file, dir), 'utf8');
      expect(text, file).not.toMatch(/Date\.now|new Date\(|toLocale|Intl\.|Math\.random|process\.env/);
    }
  });
});
