/**
 * The document of an API that can not run the shipped TypeScript runtime (the Go review
 * fixture): its metrics table names the application's port, not the generated middleware, as
 * the source of the middleware's and the outbound client's series.
 */
import { readFileSync } from 'node:fs';
import { Lexer, type Tokens } from 'marked';
import { describe, expect, it } from 'vitest';
import { renderMarkdown } from '../../src/render/markdown/index.js';
import { exampleInput, inputFromAnswers } from './fixtures.js';

function metricSources(markdown: string): Map<string, string> {
  const table = Lexer.lex(markdown, { gfm: true }).find(
    (t): t is Tokens.Table => t.type === 'table' && t.header[0]?.text === 'Metric' && t.header[3]?.text === 'Emitted by',
  );
  if (!table) throw new Error('no metrics table');
  return new Map(table.rows.map((r) => [r[0]!.text.replace(/`/g, ''), r[3]!.text]));
}

describe('metrics table', () => {
  it('names the Go port as the source of the series the generated TypeScript would emit', () => {
    const raw = JSON.parse(readFileSync(new URL('../fixtures/review/go-envoy-anonymous.answers.json', import.meta.url), 'utf8'));
    const md = renderMarkdown(inputFromAnswers(raw), { layout: 'single' })[0]!.content;
    const sources = metricSources(md);
    expect(sources.get('ratelimit_decisions_total')).toBe('middleware (its Go port)');
    expect(sources.get('ratelimit_throttled_total')).toBe('middleware (its Go port), outbound client (its Go port)');
    expect(sources.get('redis_db_keys')).toBe('redis_exporter');
  });

  it('keeps the generated middleware as the source on Node.js', () => {
    const md = renderMarkdown(exampleInput('saas-platform'), { layout: 'single' })[0]!.content;
    expect(metricSources(md).get('ratelimit_decisions_total')).toBe('middleware');
  });
});
