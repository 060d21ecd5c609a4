/** The Markdown output passes markdownlint with the repository's checked-in config. */
import { readFileSync } from 'node:fs';
import { lint } from 'markdownlint/sync';
import { describe, expect, it } from 'vitest';
import { renderMarkdown } from '../../src/render/markdown/index.js';
import type { OutputFile } from '../../src/render/types.js';
import { EXAMPLES, exampleInput, hostileAnswers, inputFromAnswers } from './fixtures.js';

const config = JSON.parse(readFileSync(new URL('../../.markdownlint.json', import.meta.url), 'utf8')) as Record<string, unknown>;

function problems(files: OutputFile[]): string[] {
  const strings = Object.fromEntries(files.map((f) => [f.path, f.content]));
  const result = lint({ strings, config });
  return Object.entries(result).flatMap(([file, errors]) =>
    errors.map(
      (e) => `${file}:${e.lineNumber} ${e.ruleNames.join('/')} ${e.ruleDescription} ${e.errorDetail ?? ''} ${e.errorContext ?? ''}`,
    ),
  );
}

describe('markdownlint', () => {
  it('uses a config that keeps the structural rules on', () => {
    expect(config.default).toBe(true);
    for (const rule of ['MD033', 'MD051', 'MD055', 'MD056', 'MD024']) expect(config[rule], rule).not.toBe(false);
  });

  it.each(EXAMPLES.flatMap((name) => (['single', 'folder'] as const).map((layout) => [name, layout] as const)))(
    '%s (%s) is clean',
    (name, layout) => {
      expect(problems(renderMarkdown(exampleInput(name), { layout }))).toEqual([]);
    },
  );

  it.each(['single', 'folder'] as const)('the hostile design (%s) is clean', (layout) => {
    expect(problems(renderMarkdown(inputFromAnswers(hostileAnswers()), { layout }))).toEqual([]);
  });

  it.each(['single', 'folder'] as const)('a design with every access feature and the memory fallback (%s) is clean', (layout) => {
    const answers = JSON.parse(readFileSync(new URL('../design/fixtures/access-features.answers.json', import.meta.url), 'utf8'));
    expect(problems(renderMarkdown(inputFromAnswers(answers), { layout }))).toEqual([]);
  });

  it('a design with embedded code files is clean', () => {
    const input = exampleInput('saas-platform');
    const codeFiles = [
      { path: 'ratelimit/gcra.lua', language: 'lua', content: '-- ```\n\tlocal x = 1   \n\n\nreturn x\n' },
      { path: 'ratelimit/middleware.ts', language: 'typescript', content: 'export const a = `b`;\n' },
      // the response contract links the OpenAPI overlay when there is one
      { path: 'openapi/rate-limits.overlay.yaml', language: 'yaml', content: 'overlay: 1.0.0\n' },
    ];
    const files = renderMarkdown({ ...input, codeFiles }, { layout: 'single' });
    expect(files.map((f) => f.content).join('')).toContain('the OpenAPI Overlay\n`openapi/rate-limits.overlay.yaml`');
    expect(problems(files)).toEqual([]);
  });
});
