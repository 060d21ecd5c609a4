/**
 * generateCode: every file the design needs, once, sorted, byte-identical between runs; the
 * Lua files are the exact bytes of lua/*.lua; the README lists every file with its phrase.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Answers } from '../../src/answers/schema.js';
import { CODE_README_PATH, generateCode } from '../../src/codegen/index.js';
import { checkDesign } from '../../src/constraints/index.js';
import { buildDesign } from '../../src/design/build.js';
import { compileDesign } from '../../src/codegen/middleware/index.js';
import type { Design } from '../../src/design/model.js';
import { exampleDesign, exampleNames, ROOT } from '../helpers/examples.js';
import { hostileDesign } from './support/hostile.js';

const designs: [string, () => Design][] = [
  ...exampleNames().map((n) => [n, () => exampleDesign(n)] as [string, () => Design]),
  ['hostile', hostileDesign],
];

describe('generateCode', () => {
  for (const [name, make] of designs) {
    it(`${name}: the design's files, sorted, unique, deterministic`, () => {
      const design = make();
      const files = generateCode(design);
      const paths = files.map((f) => f.path);
      expect(paths).toEqual([...paths].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
      expect(new Set(paths).size).toBe(paths.length);
      expect(JSON.stringify(generateCode(make()))).toBe(JSON.stringify(files));
      for (const f of files) {
        expect(f.path).toMatch(/^[a-z0-9A-Z][\w./-]*$/);
        expect(f.path).not.toContain('..');
        expect(f.language.length).toBeGreaterThan(0);
        expect(f.description.length).toBeGreaterThan(0);
        expect(f.content.endsWith('\n')).toBe(true);
      }

      // Lua: exactly the scripts the design uses, byte for byte
      const lua = files.filter((f) => f.path.startsWith('lua/'));
      // (identity-limits.lua among them when the middleware checks several limits of one identity in one call)
      expect(lua.map((f) => f.path).sort()).toEqual(design.enforcement.scripts.map((s) => s.file).sort());
      // and the scripts design.ts embeds are the design's, the outbound bucket aside (providers.ts embeds it)
      expect(
        compileDesign(design)
          .scripts.map((s) => s.name)
          .sort(),
      ).toEqual(
        design.enforcement.scripts
          .map((s) => s.name)
          .filter((n) => n !== 'outbound-bucket')
          .sort(),
      );
      for (const f of lua) expect(f.content).toBe(readFileSync(join(ROOT, f.path), 'utf8'));

      // middleware for the framework; gateway config only with edge rules; alerts always
      expect(paths.some((p) => p.startsWith('middleware/'))).toBe(true);
      const edge = design.rules.some((r) => r.layer === 'edge') && design.scope.gateway !== 'none';
      expect(paths.some((p) => p.startsWith('gateway/'))).toBe(edge);
      expect(paths).toContain('monitoring/ratelimit-alerts.yaml');
      expect(paths.includes('outbound/client.ts')).toBe((design.outbound?.providers.length ?? 0) > 0);

      // the README lists every other file with its phrase
      const readme = files.find((f) => f.path === CODE_README_PATH);
      expect(readme?.language).toBe('markdown');
      for (const f of files.filter((x) => x.path !== CODE_README_PATH)) expect(readme?.content).toContain(`[${f.path}](${f.path}): `);
    });
  }

  it('saas-platform (nginx, outbound providers) gets the full set', () => {
    const paths = generateCode(exampleDesign('saas-platform')).map((f) => f.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'README.md',
        'gateway/nginx-server.conf',
        'gateway/nginx.conf',
        'lua/gcra.lua',
        'lua/identity-limits.lua',
        'lua/outbound-bucket.lua',
        'lua/sliding-window-log.lua',
        'monitoring/ratelimit-alerts.yaml',
        'outbound/client.ts',
        'outbound/providers.ts',
        'outbound/types.ts',
        'middleware/design.ts',
        'middleware/limiter.ts',
        'middleware/express.ts',
      ]),
    );
  });
});

describe('the Lua files shipped beside design.ts', () => {
  it('include every script design.ts runs, also for a hand-written rule that states no layer', () => {
    const raw = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/review/express-cloudflare.answers.json'), 'utf8'));
    delete raw.$schema;
    raw.rules = [
      {
        id: 'export-per-tenant',
        endpoints: ['export'],
        identity: 'tenant',
        algorithm: 'fixed-window',
        rate: { requests: 10, per: 'hour' },
      },
    ];
    const design = buildDesign(Answers.parse(raw), { date: '2026-12-03' });
    const files = generateCode(design);
    const runs = compileDesign(design).scripts.map((s) => s.file);
    expect(runs).toContain('lua/fixed-window.lua');
    for (const file of runs) expect(files.map((f) => f.path)).toContain(file);
    const atomic = checkDesign(design, files).find((c) => c.id === 'atomic-check')!;
    expect(atomic.messages.join('\n')).not.toContain('ships no lua/');
  });
});
