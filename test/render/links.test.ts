import { describe, expect, it } from 'vitest';
import { checkLinks, DeadLinkError, findDeadLinks, headings, linkTargets } from '../../src/render/links.js';

const page = (path: string, content: string) => ({ path, content });

describe('headings', () => {
  it('gives GitHub anchors to headings, numbering repeats, and reads escaped text', () => {
    const list = headings('# Title \\<x\\>\n\n## 2. Limit matrix\n\n## Notes\n\n### Notes\n\n```md\n## not a heading\n```\n');
    expect(list.map((h) => [h.level, h.text, h.anchor])).toEqual([
      [1, 'Title <x>', 'title-x'],
      [2, '2. Limit matrix', '2-limit-matrix'],
      [2, 'Notes', 'notes'],
      [3, 'Notes', 'notes-1'],
    ]);
  });
});

describe('linkTargets', () => {
  it('finds links in paragraphs, lists and tables, not in code', () => {
    const md = '[a](x.md)\n\n- [b](#b)\n\n| c |\n| --- |\n| [c](y.md#c) |\n\n`[d](z.md)`\n\n```\n[e](w.md)\n```\n';
    expect(linkTargets(md)).toEqual(['x.md', '#b', 'y.md#c']);
  });
});

describe('checkLinks', () => {
  const files = [
    page('README.md', '# Home\n\n[one](01-one.md) [anchor](01-one.md#2-section) [self](#home) [web](https://example.com/x#y)\n'),
    page('01-one.md', '# One\n\n## 2. Section\n\n[home](README.md) [up](./README.md#home)\n'),
  ];

  it('accepts links that resolve to a produced file and an existing anchor', () => {
    expect(findDeadLinks(files)).toEqual([]);
    expect(() => checkLinks(files)).not.toThrow();
  });

  it('catches a dead anchor', () => {
    const broken = [...files, page('02-two.md', '# Two\n\n[gone](01-one.md#3-section)\n')];
    expect(() => checkLinks(broken)).toThrow(DeadLinkError);
    expect(findDeadLinks(broken)).toEqual([
      { file: '02-two.md', href: '01-one.md#3-section', reason: 'no heading with anchor #3-section in 01-one.md' },
    ]);
  });

  it('catches a dead anchor in the same file, a missing file and a link out of the folder', () => {
    const broken = [page('README.md', '# Home\n\n[a](#nowhere) [b](02-missing.md) [c](../README.md) [d]()\n')];
    expect(findDeadLinks(broken).map((d) => d.href)).toEqual(['#nowhere', '02-missing.md', '../README.md', '']);
    try {
      checkLinks(broken);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(DeadLinkError);
      expect((e as DeadLinkError).deadLinks).toHaveLength(4);
      expect((e as Error).message).toContain('README.md: #nowhere');
    }
  });

  it('resolves relative paths from the linking file and decodes percent-encoding', () => {
    const nested = [page('docs/a.md', '# A b\n\n[b](../b.md#b-%C3%BC)\n'), page('b.md', '# B ü\n\n[a](docs/a.md#a-b)\n')];
    expect(findDeadLinks(nested)).toEqual([]);
  });
});
