/**
 * The generated TypeScript compiles under tsc --strict (plus noUncheckedIndexedAccess and
 * exactOptionalPropertyTypes) in a scratch project, for every example and both frameworks,
 * and for a design full of hostile names; the SHA1s it embeds are those of lua/*.lua; hostile
 * strings come back out of the compiled module exactly as they went in.
 */
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleDesign, exampleNames, ROOT } from '../helpers/examples.js';
import { allFiles, compileScratch, designFrom, type Scratch } from './harness.js';
import { HOSTILE, HOSTILE_TEXT, IN_PROCESS } from './designs.js';

interface Core {
  PROJECT: string;
  DOCS_URL: string;
  PLANS: string[];
  SCRIPTS: { name: string; file: string; sha1: string; source: string }[];
  ROUTES: { method: string; route: string; endpoint: string | null }[];
  RULES: { id: string; title: string; key: string; costByEndpoint: [string, number][]; plan: string | null }[];
}

/** The EVALSHA ids, read straight from the files (not through src/lua.ts). */
const LUA_SHA1 = Object.fromEntries(
  readdirSync(path.join(ROOT, 'lua'))
    .filter((f) => f.endsWith('.lua'))
    .map((f) => [
      `lua/${f}`,
      createHash('sha1')
        .update(readFileSync(path.join(ROOT, 'lua', f)))
        .digest('hex'),
    ]),
);

let scratch: Scratch;
const hostileDesign = designFrom(HOSTILE);

beforeAll(async () => {
  const sets = Object.fromEntries(exampleNames().map((n) => [n, allFiles(exampleDesign(n))]));
  scratch = await compileScratch({ ...sets, hostile: allFiles(hostileDesign), 'in-process': allFiles(designFrom(IN_PROCESS)) });
});

afterAll(() => scratch?.remove());

describe('generated middleware under tsc --strict', () => {
  it('compiles for every example, both frameworks, the hostile design and the in-process design', () => {
    expect(scratch.output).toBe('');
    expect(scratch.ok).toBe(true);
  });

  it.each(exampleNames())("%s: the embedded Lua is byte for byte lua/*.lua, and its SHA1 is the file's", async (name) => {
    const core = await scratch.load<Core>(name, 'ratelimit-core');
    expect(core.SCRIPTS.length).toBeGreaterThan(0);
    for (const s of core.SCRIPTS) {
      expect(s.sha1).toBe(LUA_SHA1[s.file]);
      expect(createHash('sha1').update(s.source).digest('hex')).toBe(s.sha1);
      expect(s.source).toBe(readFileSync(path.join(ROOT, s.file), 'utf8'));
    }
    // and the ids are pinned: a script change must show up here on purpose
    expect(LUA_SHA1).toMatchObject({
      'lua/gcra.lua': 'a1a5b65b9bb8afd664e85e1523ccea2d60938924',
      'lua/sliding-window-log.lua': 'c0bbaa6b8476cbddd0f49efc41b42c28e92da4a2',
      'lua/fixed-window.lua': 'e0179e694c18c50e34c937efc85c6b710f04b02c',
      'lua/identity-limits.lua': '85d199b962b91bd20ef24a7a850337a43b93f601',
    });
  });

  it('embeds only the scripts its rules use', async () => {
    expect((await scratch.load<Core>('minimal-generic', 'ratelimit-core')).SCRIPTS.map((s) => s.name)).toEqual(['gcra']);
    expect((await scratch.load<Core>('saas-platform', 'ratelimit-core')).SCRIPTS.map((s) => s.name)).toEqual([
      'gcra',
      'sliding-window-log',
      // the tenant's fairness bucket and its quota: fields of the tenant's hash, checked in one
      // call (so no fixed-window.lua: nothing else counts in a window)
      'identity-limits',
      'penalty', // its penalty box runs on the store too
    ]);
    expect((await scratch.load<Core>('in-process', 'ratelimit-core')).SCRIPTS).toEqual([]);
  });

  it('hostile names round-trip exactly: every string is data, nothing ran', async () => {
    const core = await scratch.load<Core>('hostile', 'ratelimit-core');
    expect(core.PROJECT).toBe(hostileDesign.scope.projectName);
    expect(core.DOCS_URL).toBe(hostileDesign.contract.docsUrl);
    expect(core.PLANS).toEqual(hostileDesign.scope.plans.map((p) => p.name));
    expect(core.ROUTES.map((r) => [r.route, r.endpoint])).toEqual(
      expect.arrayContaining(hostileDesign.scope.endpoints.map((e) => [e.route, e.name])),
    );
    const hand = core.RULES.find((r) => r.id === 'hand-written');
    expect(hand?.title).toBe(HOSTILE_TEXT);
    expect(hand?.key).toBe('{t:<tenant-id>}:*/`${k}`"');
    const fairness = core.RULES.find((r) => r.plan === hostileDesign.scope.plans[0]?.name && r.id.startsWith('fairness'));
    expect(fairness?.costByEndpoint).toEqual([[hostileDesign.scope.endpoints[0]?.name, 3]]);
    for (const rule of hostileDesign.rules.filter((r) => r.layer === 'middleware')) {
      expect(core.RULES.find((r) => r.id === rule.id)?.title).toBe(rule.title);
    }
    // the adapters load too (their header comments carry the hostile project name)
    const express = await scratch.load<Record<string, unknown>>('hostile', 'express');
    expect(typeof express.rateLimit).toBe('function');
  });
});
