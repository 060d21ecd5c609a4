/**
 * Generated files for the artefact checks: the real files of a design, and the same files with
 * one of them broken the way a wrong generator or a hand edit would break it.
 */
import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import { generateCode, type CodeFile } from '../../src/codegen/index.js';
import type { Design } from '../../src/design/model.js';
import { exampleDesign } from '../helpers/examples.js';
import { ACCESS, MAIN } from '../middleware/designs.js';
import { designFrom } from '../middleware/harness.js';

export interface Generated {
  design: Design;
  files: readonly CodeFile[];
}

const cache = new Map<string, Generated>();

function generated(key: string, make: () => Design): Generated {
  let g = cache.get(key);
  if (!g) {
    const design = make();
    g = { design, files: generateCode(design) };
    cache.set(key, g);
  }
  return g;
}

/** saas-platform: nginx edge rules, plans and quotas, outbound providers, Express. */
export const saas = (): Generated => generated('saas', () => exampleDesign('saas-platform'));

/** A small Express API with dual-key login (silent, fail closed) and no gateway. */
export const main = (framework: 'express' | 'koa' | 'other' = 'express'): Generated =>
  generated(`main-${framework}`, () => designFrom({ ...MAIN, stack: { ...MAIN.stack, framework } }));

/** MAIN with an allowlist, deny list, penalty box (lua/penalty.lua), custom identity and memory fallback. */
export const access = (): Generated => generated('access', () => designFrom(ACCESS));

/** An answers fixture of test/fixtures/, parsed. */
function fixture(path: string): any {
  return JSON.parse(readFileSync(new URL(`../fixtures/${path}`, import.meta.url), 'utf8'));
}

/**
 * An API-key API on AWS API Gateway: two API-key edge rules on different routes, one of them
 * split by cost (bulk-per-key-cost-3 for the cost-3 export), the ceiling a stage throttle.
 */
export const awsKeys = (): Generated => generated('aws-keys', () => designFrom(fixture('gateway/aws-api-keys.answers.json')));

/** Hono behind AWS API Gateway: the ceiling a stage throttle over 8 API methods (test/fixtures/review). */
export const awsSessions = (): Generated =>
  generated('aws-sessions', () => designFrom(fixture('review/hono-valkey-aws-sessions.answers.json')));

/** The keyless census API (ceiling, a per-IP rule and its cost-5 part) on another gateway. */
export const keyless = (gateway: 'envoy' | 'cloudflare' | 'aws-api-gateway' | 'kong' | 'nginx'): Generated =>
  generated(`keyless-${gateway}`, () => {
    const a = fixture('edge-cost/keyless-envoy.answers.json');
    return designFrom({ ...a, stack: { ...a.stack, gateway } });
  });

/** The files with one file's content changed (the file must exist and must change). */
export function edit(g: Generated, path: string, change: (content: string) => string): CodeFile[] {
  const file = g.files.find((f) => f.path === path);
  expect(file, `the design ships ${path}`).toBeDefined();
  const changed = change(file?.content ?? '');
  expect(changed, `the edit changes ${path}`).not.toBe(file?.content);
  return g.files.map((f) => (f.path === path ? { ...f, content: changed } : f));
}

/** The files without one (which must exist). */
export function without(g: Generated | readonly CodeFile[], ...paths: string[]): CodeFile[] {
  const files = 'files' in g ? g.files : g;
  for (const p of paths)
    expect(
      files.some((f) => f.path === p),
      `the design ships ${p}`,
    ).toBe(true);
  return files.filter((f) => !paths.includes(f.path));
}

/** The files with one JSON file changed in place (parsed, edited, written back as the generator writes it). */
export function editJson(g: Generated, path: string, change: (doc: any) => void): CodeFile[] {
  return edit(g, path, (c) => {
    const doc = JSON.parse(c);
    change(doc);
    return `${JSON.stringify(doc, null, 2)}\n`;
  });
}
