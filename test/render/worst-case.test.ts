/** The worst-case table in the document: after the algorithm decisions, in Markdown and HTML, with verify's measurements when there are any. */
import { JSDOM } from 'jsdom';
import { describe, expect, it } from 'vitest';
import { worstCaseTable } from '../../src/design/worst-case.js';
import { renderHtml } from '../../src/render/html/index.js';
import { renderMarkdown } from '../../src/render/markdown/index.js';
import type { RenderInput } from '../../src/render/types.js';
import { exampleInput } from './fixtures.js';

const SVG = (): string => '<svg viewBox="0 0 10 10"></svg>';

function markdown(input: RenderInput): string {
  return renderMarkdown(input, { layout: 'single' })[0]!.content;
}

function tableAfter(text: string, heading: string): string[] {
  const start = text.indexOf(heading);
  expect(start, heading).toBeGreaterThan(0);
  const lines = text.slice(start).split('\n');
  const first = lines.findIndex((l) => l.startsWith('| Rule |'));
  const rows: string[] = [];
  for (const l of lines.slice(first + 2)) {
    if (!l.startsWith('|')) break;
    rows.push(l);
  }
  return rows;
}

describe('the worst-case table', () => {
  it('says verify measures only the kinds of rows this design has', () => {
    expect(markdown(exampleInput('saas-platform'))).toContain(
      '`verify --write` measures the fixed windows, GCRA buckets and the local + store hybrid on a real Redis',
    );
    // no quota window and no in-process bucket in front of the store: neither is promised
    expect(markdown(exampleInput('consumer-auth'))).toContain('`verify --write` measures the GCRA buckets on a real Redis');
  });

  it('follows the algorithm decisions with one row per rule and layer, formula and number', () => {
    const input = exampleInput('saas-platform');
    const md = markdown(input);
    const at = md.indexOf('### 3.2 Worst case per identity');
    expect(at).toBeGreaterThan(md.indexOf('## 3. Algorithm decisions'));
    expect(at).toBeLessThan(md.indexOf('## 4. Enforcement'));
    const rows = tableAfter(md, '### 3.2 Worst case per identity');
    const table = worstCaseTable(input.design);
    expect(rows).toHaveLength(table.length);
    expect(rows.find((r) => r.startsWith('| `webhooks-per-source` | middleware (local + store) |'))).toContain(
      '| 5,780 | 4,800 + 500/s x 1 s + 6 x 80 |',
    );
    expect(rows.find((r) => r.startsWith('| `quota-free` |'))).toContain('| 20,000 | 2 x 10,000 |');
    expect(rows.find((r) => r.startsWith('| `global-ceiling` |'))).toContain('x 2 nodes');
    expect(md).not.toContain('| Measured |');
    expect(md).toContain('`verify --write` measures');
  });

  it('shows what verify measured beside the stated worst case', () => {
    const input = exampleInput('saas-platform');
    const design = {
      ...input.design,
      worstCaseMeasured: [
        { ruleId: 'fairness-pro', kind: 'rule', stated: 15, measured: 15, passed: true, params: 'burst 5, 10 per 1 s', scaling: 'scaled' },
        {
          ruleId: 'webhooks-per-source',
          kind: 'hybrid',
          stated: 23,
          measured: 21,
          passed: true,
          params: 'burst 5, 10 per 1 s, 4 instances x 2',
        },
      ],
    };
    const md = markdown({ ...input, design });
    const rows = tableAfter(md, '### 3.2 Worst case per identity');
    expect(md).toContain('| Rule | Layer | Algorithm | Stated | Worst case in one period | Formula | Measured | Why |');
    expect(rows.find((r) => r.startsWith('| `fairness-pro` | middleware |'))).toContain(
      '| 15 of at most 15 (burst 5, 10 per 1 s; scaled) |',
    );
    expect(rows.find((r) => r.startsWith('| `webhooks-per-source` | middleware (local + store) |'))).toContain(
      '| 21 of at most 23 (burst 5, 10 per 1 s, 4 instances x 2) |',
    );
    expect(rows.find((r) => r.startsWith('| `fairness-free` | middleware |'))).toContain('| not measured yet |');
    expect(rows.find((r) => r.startsWith('| `global-ceiling` |'))).toContain('| not run by verify |');

    const html = renderHtml({ ...input, design }, { layout: 'single', diagrams: SVG });
    const dom = new JSDOM(html.find((f) => f.path.endsWith('.html'))!.content);
    const heading = [...dom.window.document.querySelectorAll('h3')].find((h) => h.textContent?.includes('Worst case per identity'));
    expect(heading).toBeDefined();
    // the first table after the heading (the page may wrap tables in a scroll container)
    const table = [...dom.window.document.querySelectorAll('table')].find(
      (t) => heading!.compareDocumentPosition(t) & dom.window.Node.DOCUMENT_POSITION_FOLLOWING,
    );
    const headers = [...table!.querySelectorAll('th')].map((th) => th.textContent);
    expect(headers).toEqual(['Rule', 'Layer', 'Algorithm', 'Stated', 'Worst case in one period', 'Formula', 'Measured', 'Why']);
    const cells = [...table!.querySelectorAll('tbody tr')].map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent));
    expect(cells.find((c) => c[0] === 'webhooks-per-source' && c[1] === 'middleware (local + store)')?.[6]).toBe(
      '21 of at most 23 (burst 5, 10 per 1 s, 4 instances x 2)',
    );
  });

  it('is in every example, the ones without a store-backed bucket too', () => {
    for (const name of ['consumer-auth', 'minimal-generic']) {
      const md = markdown(exampleInput(name));
      expect(tableAfter(md, '### 3.2 Worst case per identity').length).toBeGreaterThan(0);
    }
  });
});

describe('one way of taking a stretch of time, stated once', () => {
  it('the worst-case table states it (as the sliding log counts, test/lua/counting-convention), and the migration section takes it from there', async () => {
    const { readFileSync } = await import('node:fs');
    const { inputFromAnswers } = await import('./fixtures.js');
    const answers = JSON.parse(readFileSync(new URL('../fixtures/review/koa-existing-nginx-mixed.answers.json', import.meta.url), 'utf8'));
    delete answers.$schema;
    const md = markdown(inputFromAnswers(answers));
    const statement =
      'takes a stretch\nthe same way: from one moment up to, not including, the moment one period later, as the sliding\nlog counts';
    expect(md.split(statement)).toHaveLength(2);
    expect(md.indexOf(statement)).toBeLessThan(md.indexOf('The project already limits requests.'));
    expect(md).toContain('both taken as the\nworst-case table takes a stretch (up to, not including, the moment one window later)');
  });
});
