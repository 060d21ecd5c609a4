/** The response contract tells client authors to measure the Retry-After wait by the clock, in Markdown and HTML. */
import { describe, expect, it } from 'vitest';
import { renderHtml } from '../../src/render/html/index.js';
import { renderMarkdown } from '../../src/render/markdown/index.js';
import { exampleInput } from './fixtures.js';

const SVG = (): string => '<svg viewBox="0 0 10 10"></svg>';

describe('the Retry-After subsection', () => {
  it('says to time the wait by the clock, since a timer on a busy loop can fire early and such a retry is refused', () => {
    for (const name of ['saas-platform', 'minimal-generic']) {
      const input = exampleInput(name);
      const md = renderMarkdown(input, { layout: 'single' })[0]?.content ?? '';
      const section = md.slice(md.indexOf('Retry-After\n'), md.indexOf('\n## ', md.indexOf('Retry-After\n')));
      expect(section, name).toContain('Time the wait by the clock, not by one timer alone');
      expect(section).toContain('a timer can fire a few milliseconds early');
      expect(section).toContain('refused once more');
      const html = renderHtml(input, { layout: 'single', diagrams: SVG })
        .map((f) => f.content)
        .join('\n');
      expect(html).toContain('Time the wait by the clock, not by one timer alone');
    }
  });
});
