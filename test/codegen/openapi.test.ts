/**
 * The OpenAPI overlay: Spectral's OWASP ruleset on the merged document of every example with an
 * OpenAPI source, the overlay applied by an independent tool (openapi-format), silent rules,
 * determinism, and the rules for reading the document (split files, local references only).
 */
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Document, Ruleset, Spectral } from '@stoplight/spectral-core';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import * as Parsers from '@stoplight/spectral-parsers';
import owasp from '@stoplight/spectral-owasp-ruleset';
import { openapiOverlay } from 'openapi-format';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { buildDesign } from '../../src/design/build.js';
import type { Design } from '../../src/design/model.js';
import { generateCode } from '../../src/codegen/index.js';
import {
  applyRateLimits,
  jsonPath,
  MERGED_PATH,
  OVERLAY_PATH,
  operationLimits,
  SPECTRAL_PATH,
  rateLimitOverlay,
} from '../../src/codegen/openapi/index.js';
import { bundleSpec, folderSpecReader, SpecReadError } from '../../src/io/openapi-source.js';
import { headerNamesOf } from '../../src/runtime/middleware/responses.js';
import { loadOpenApi, runGenerate } from '../../src/commands/generate.js';
import { UserError } from '../../src/messages.js';
import { DATE, EXAMPLES, exampleAnswers, exampleDesign, exampleNames } from '../helpers/examples.js';
import { tempDir } from '../helpers/cli.js';

type Json = Record<string, any>;

/** The examples whose answers name an OpenAPI document. */
const WITH_OPENAPI = exampleNames().filter((n) => exampleAnswers(n).openapi !== undefined);

async function exampleSpec(name: string): Promise<{ design: Design; document: Json; files: string[] }> {
  const answers = exampleAnswers(name);
  const { document, files } = await bundleSpec(answers.openapi!.path, folderSpecReader(EXAMPLES));
  return { design: exampleDesign(name), document, files };
}

async function owaspApi4(document: Json): Promise<{ code: string; path: string[] }[]> {
  const spectral = new Spectral();
  spectral.setRuleset(owasp as any);
  const results = await spectral.run(new Document(JSON.stringify(document, null, 2), Parsers.Json, 'api.json'));
  return results
    .filter((r) => String(r.code).startsWith('owasp:api4:'))
    .map((r) => ({ code: String(r.code), path: r.path.map(String) }))
    .sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
}

const RATE_HEADER_NAMES = new Set(
  (['ietf-structured', 'ietf-trio', 'x-ratelimit'] as const).flatMap((c) => headerNamesOf(c)).map((n) => n.toLowerCase()),
);

function operations(document: Json): { method: string; path: string; op: Json }[] {
  const out: { method: string; path: string; op: Json }[] = [];
  for (const [p, item] of Object.entries(document.paths as Json)) {
    for (const [method, op] of Object.entries(item as Json))
      if (typeof op === 'object' && op !== null && 'responses' in op) out.push({ method, path: p, op });
  }
  return out;
}

/** A response with its internal $ref followed. */
function resolved(document: Json, response: Json): Json {
  let cur = response;
  while (typeof cur.$ref === 'string') {
    cur = cur.$ref
      .slice(2)
      .split('/')
      .map((s: string) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce((o: Json, k: string) => o[k], document);
  }
  return cur;
}

describe('the OpenAPI overlay of the examples', () => {
  it('covers at least one example, and one with a document split across files', async () => {
    expect(WITH_OPENAPI.length).toBeGreaterThanOrEqual(2);
    const split = await Promise.all(WITH_OPENAPI.map(async (n) => (await exampleSpec(n)).files.length));
    expect(Math.max(...split)).toBeGreaterThanOrEqual(3);
  });

  for (const name of WITH_OPENAPI) {
    describe(name, () => {
      it('Spectral (OWASP ruleset): the source has API4 findings; the merged document has none but the declared silences', async () => {
        const { design, document } = await exampleSpec(name);
        const before = await owaspApi4(document);
        // the test can fail: the source lacks what the overlay adds
        expect(before.some((f) => f.code === 'owasp:api4:2023-rate-limit-responses-429')).toBe(true);
        expect(before.some((f) => f.code === 'owasp:api4:2023-rate-limit')).toBe(true);

        const merged = applyRateLimits(design, document);
        const after = await owaspApi4(merged);
        // Every operation whose responses carry the headers is clean. The only findings left are
        // the rate-limit-header rule on operations that deliberately send none (a silent security
        // rule, an edge-only limit, an exempt endpoint), as their x-rate-limit says, and the 429
        // rule on exempt endpoints.
        const silenced = new Set<string>();
        for (const { method, path: p, op } of operations(merged)) {
          const x = op['x-rate-limit'];
          expect(x, `${method} ${p} has x-rate-limit`).toBeDefined();
          if (x.headers !== 'full') silenced.add(`${p} ${method}`);
        }
        // a finding on a shared response component is reported where the component is defined
        const users = (pointer: string): string[] =>
          operations(merged).flatMap(({ method, path: p, op }) =>
            Object.values(op.responses as Json).some((r: Json) => r.$ref === pointer) ? [`${p} ${method}`] : [],
          );
        const unexpected = after.filter((f) => {
          if (f.path[0] === 'components' && f.path[1] === 'responses') {
            const using = users(`#/components/responses/${f.path[2]}`);
            return f.code !== 'owasp:api4:2023-rate-limit' || using.length === 0 || using.some((u) => !silenced.has(u));
          }
          const where = `${f.path[1]} ${f.path[2]}`;
          if (!silenced.has(where)) return true;
          const x = (merged.paths as Json)[f.path[1] as string][f.path[2] as string]['x-rate-limit'];
          if (f.code === 'owasp:api4:2023-rate-limit') return false;
          return !(f.code === 'owasp:api4:2023-rate-limit-responses-429' && x.exempt === true);
        });
        expect(unexpected).toEqual([]);
        // the silences are there (the examples have login operations)
        expect(silenced.size).toBeGreaterThan(0);
        expect(after.length).toBeLessThan(before.length);
      });

      it('Spectral (OWASP ruleset) with the generated ruleset, which declares those silences: no API4 finding on the merged document', async () => {
        const { design, document } = await exampleSpec(name);
        const files = generateCode(design, { openapi: { document, source: 'api.yaml', merged: true } });
        const text = (p: string): string => files.find((f) => f.path === p)!.content;
        const ruleset = parseYaml(text(SPECTRAL_PATH));
        expect(ruleset.extends).toEqual(['@stoplight/spectral-owasp-ruleset']);
        const dir = tempDir();
        const spectral = new Spectral();
        spectral.setRuleset(
          new Ruleset({ extends: [owasp as any], overrides: ruleset.overrides }, { source: path.join(dir, SPECTRAL_PATH) }),
        );
        const run = async (yaml: string) =>
          (await spectral.run(new Document(yaml, Parsers.Yaml, path.join(dir, MERGED_PATH)))).filter((r) =>
            String(r.code).startsWith('owasp:api4:'),
          );
        expect(await run(text(MERGED_PATH))).toEqual([]);
        // the overrides are narrow: the source document still has its findings under the same ruleset
        expect((await run(JSON.stringify(document))).length).toBeGreaterThan(0);
      });

      it('the overlay applies with openapi-format and gives the same document as the merged one', async () => {
        const { design, document } = await exampleSpec(name);
        const [overlay] = generateCode(design, { openapi: { document, source: 'x.yaml' } }).filter((f) => f.path === OVERLAY_PATH);
        const overlaySet = parseYaml(overlay!.content);
        expect(overlaySet.overlay).toBe('1.0.0');
        const applied = await openapiOverlay(structuredClone(document), { overlaySet });
        expect(applied.resultData.totalUnusedActions).toBe(0);
        expect(JSON.parse(JSON.stringify(applied.data))).toEqual(JSON.parse(JSON.stringify(applyRateLimits(design, document))));
      });

      it('applied to an already merged document, changes nothing (a rerun after merging)', async () => {
        const { design, document } = await exampleSpec(name);
        const merged = applyRateLimits(design, document);
        expect(applyRateLimits(design, merged)).toEqual(merged);
        const again = await openapiOverlay(structuredClone(merged), { overlaySet: rateLimitOverlay(design, { document: merged }) as any });
        expect(JSON.parse(JSON.stringify(again.data))).toEqual(merged);
      });

      it('a silent rule keeps its operation silent: no rate-limit header anywhere, Retry-After on the 429', async () => {
        const { design, document } = await exampleSpec(name);
        const merged = applyRateLimits(design, document);
        const limits = operationLimits(design, document);
        const silent = limits.filter((l) => l.headers === 'silent');
        expect(silent.length).toBeGreaterThan(0);
        for (const l of silent) {
          expect(l.rules.some((r) => r.headers === 'silent')).toBe(true);
          const op = (merged.paths as Json)[l.path][l.method.toLowerCase()];
          for (const [code, response] of Object.entries(op.responses as Json)) {
            const names = Object.keys(resolved(merged, response).headers ?? {}).map((n) => n.toLowerCase());
            expect(
              names.filter((n) => RATE_HEADER_NAMES.has(n)),
              `${l.method} ${l.path} ${code}`,
            ).toEqual([]);
            if (code === '429') expect(names).toEqual(['retry-after']);
          }
        }
        // and a full one does carry the convention's headers on its 2xx and 4xx responses
        const full = limits.find((l) => l.headers === 'full');
        expect(full).toBeDefined();
        const op = (merged.paths as Json)[full!.path][full!.method.toLowerCase()];
        for (const [code, response] of Object.entries(op.responses as Json)) {
          if (!/^[24]/.test(code)) continue;
          const names = Object.keys(resolved(merged, response).headers ?? {});
          for (const h of design.contract.headers) expect(names, `${full!.method} ${full!.path} ${code}`).toContain(h.name);
        }
      });
    });
  }

  it('is deterministic: the same answers and date give the same bytes', async () => {
    for (const name of WITH_OPENAPI) {
      const a = await exampleSpec(name);
      const b = await exampleSpec(name);
      const files = (x: typeof a) => generateCode(x.design, { openapi: { document: x.document, source: 'api.yaml', merged: true } });
      const first = files(a);
      expect(first.map((f) => f.path)).toEqual(expect.arrayContaining([OVERLAY_PATH, MERGED_PATH]));
      expect(files(b)).toEqual(first);
    }
  });

  it('matches operations by the runtime route matching: path templates, the server path, exempt endpoints', async () => {
    const { design, document } = await exampleSpec('saas-platform');
    const limits = operationLimits(design, document);
    const byKey = new Map(limits.map((l) => [`${l.method} ${l.path}`, l]));
    expect(byKey.get('GET /v1/orders/{id}')?.endpoint).toBe('get-order');
    // the literal segment wins over the parameter, as in a router
    expect(byKey.get('GET /v1/orders/search')?.endpoint).toBe('search-orders');
    expect(byKey.get('GET /healthz')?.exempt).toBe(true);
    expect(byKey.get('GET /healthz')?.rules).toEqual([]);
    expect(byKey.get('POST /v1/auth/login')?.headers).toBe('silent');
    // every endpoint of the answers owns an operation; one that does not is named in the overlay's header
    expect(design.scope.endpoints.filter((e) => !limits.some((l) => l.endpoint === e.name))).toEqual([]);
    const fewer = { ...document, paths: Object.fromEntries(Object.entries(document.paths as Json).filter(([p]) => p !== '/v1/exports')) };
    const [overlay] = generateCode(design, { openapi: { document: fewer, source: 'api.yaml' } }).filter((f) => f.path === OVERLAY_PATH);
    expect(overlay!.content).toContain('# Endpoints of the answers with no operation in the document: export-orders (POST /v1/exports).');
  });
});

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

describe("the problem schema states a soft quota's refusal at its hard stop", () => {
  /** The RateLimitProblem schema the overlay adds for a design, over that design's own document. */
  async function problemSchemaOf(design: Design): Promise<Json> {
    const { document } = await exampleSpec('saas-platform');
    const overlay = rateLimitOverlay(design, { document }) as Json;
    const schema = (overlay.actions as Json[]).map((a) => a.update?.RateLimitProblem).find((x) => x !== undefined);
    expect(schema).toBeDefined();
    return schema as Json;
  }

  it('documents limit.quota, limit.hardStop and limit.overageAllowance, and the real 429 body validates', async () => {
    const design = exampleDesign('saas-platform');
    const body = design.contract.overageExceededBody as Json;
    expect(body.limit).toMatchObject({ rule: 'quota-pro', quota: 1000000, hardStop: 1200000, overageAllowance: 200000 });
    const schema = await problemSchemaOf(design);
    const fields = schema.properties.limit.properties as Json;
    expect(fields.hardStop.description).toMatch(/the count at which calls are refused/);
    expect(fields.overageAllowance.description).toMatch(/hardStop minus quota/);
    expect(fields.quota.description).toMatch(/its plan quota; the refusal then came at hardStop/);
    // optional: only a soft quota's refusal carries them
    expect(schema.properties.limit.required ?? []).not.toContain('hardStop');
    const ajv = new Ajv({ allErrors: true, strict: false, unicodeRegExp: false });
    addFormats(ajv);
    for (const b of [body, design.contract.quotaExceededBody, design.contract.rateLimitedBody]) {
      expect(ajv.validate(schema, b), JSON.stringify(ajv.errors)).toBe(true);
    }
  });

  it('has no hard stop field for a design whose plans all refuse at their quota', async () => {
    const answers = exampleAnswers('saas-platform');
    const hard = buildDesign(
      { ...answers, plans: answers.plans?.map((p) => ({ ...p, exhaustion: 'hard' as const, overageCap: undefined })) },
      { date: DATE },
    );
    expect(hard.contract.overageExceededBody).toBeUndefined();
    const fields = (await problemSchemaOf(hard)).properties.limit.properties as Json;
    expect(Object.keys(fields)).toContain('quota');
    expect(Object.keys(fields)).not.toContain('hardStop');
    expect(Object.keys(fields)).not.toContain('overageAllowance');
  });
});

describe('the overlay document', () => {
  const design = buildDesign(
    {
      endpoints: [
        { name: 'login', method: 'POST', route: '/login', class: 'auth', authKind: 'login', anonymous: true },
        { name: 'items', method: 'GET', route: '/items/:id', class: 'read', anonymous: false },
      ],
      headers: { convention: 'x-ratelimit' },
    },
    { date: DATE },
  );

  it('writes nothing for a document without operations (an overlay needs an action)', () => {
    const document = { openapi: '3.1.0', info: { title: 'T', version: '1' }, paths: {} };
    expect(generateCode(design, { openapi: { document, source: 'a.yaml' } }).some((f) => f.path.startsWith('openapi/'))).toBe(false);
  });

  it('writes targets as normalized JSONPath, quoting what a path key holds', () => {
    expect(jsonPath(['paths', "/a/{b}/it's", 'get'])).toBe("$['paths']['/a/{b}/it\\'s']['get']");
    expect(jsonPath(['x\\y'])).toBe("$['x\\\\y']");
  });

  it('adds to what is there without replacing it: existing headers and a 429 of the document stay', () => {
    const document = {
      openapi: '3.0.3',
      info: { title: 'T', version: '1' },
      paths: {
        '/items/{id}': {
          get: {
            responses: {
              '200': { description: 'ok', headers: { ETag: { schema: { type: 'string' } } } },
              '429': { description: 'mine', headers: { 'Retry-After': { schema: { type: 'integer' } } } },
            },
          },
        },
        '/login': { post: { 'x-rate-limit': { old: true }, responses: { '204': { description: 'in' } } } },
      },
    };
    const merged = applyRateLimits(design, document) as Json;
    const get = merged.paths['/items/{id}'].get;
    expect(Object.keys(get.responses['200'].headers)).toEqual(['ETag', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']);
    expect(get.responses['429'].description).toBe('mine');
    expect(get.responses['429'].headers['Retry-After']).toEqual({ schema: { type: 'integer' } });
    expect(get.responses['429'].content['application/problem+json']).toBeDefined();
    const login = merged.paths['/login'].post;
    expect(login['x-rate-limit'].old).toBeUndefined();
    expect(login['x-rate-limit'].headers).toBe('silent');
    expect(Object.keys(login.responses['204'].headers ?? {})).toEqual([]);
    // the input is not changed
    expect(document.paths['/login'].post['x-rate-limit']).toEqual({ old: true });
    // the overlay says the same: openapi-format applies it to the same result
    const overlay = rateLimitOverlay(design, { document }) as any;
    return openapiOverlay(structuredClone(document), { overlaySet: overlay }).then((r: any) => {
      expect(JSON.parse(JSON.stringify(r.data))).toEqual(merged);
    });
  });
});

describe('reading the document', () => {
  function write(dir: string, files: Record<string, string>): void {
    for (const [p, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
      writeFileSync(path.join(dir, p), text);
    }
  }

  it('bundles a document split across files (paths in one, components in another)', async () => {
    const dir = tempDir();
    write(dir, {
      'api/openapi.yaml': "openapi: 3.0.3\ninfo: {title: T, version: '1'}\npaths:\n  /items:\n    $ref: 'paths/items.yaml'\n",
      'api/paths/items.yaml': "get:\n  responses:\n    '200': {$ref: '../components.yaml#/responses/Ok'}\n",
      'api/components.yaml': 'responses:\n  Ok: {description: fine}\n',
    });
    const { document, files } = await bundleSpec('api/openapi.yaml', folderSpecReader(dir));
    expect(files).toEqual(['api/openapi.yaml', 'api/paths/items.yaml', 'api/components.yaml']);
    expect((document as Json).paths['/items'].get.responses['200']).toEqual({ description: 'fine' });
  });

  it('refuses references to URLs, outside the folder, and through symbolic links', async () => {
    const dir = tempDir();
    write(dir, {
      'http.yaml': "openapi: 3.0.3\npaths:\n  /a: {$ref: 'http://127.0.0.1:9/x.yaml'}\n",
      'up.yaml': "openapi: 3.0.3\npaths:\n  /a: {$ref: '../../etc/passwd'}\n",
      'linked.yaml': "openapi: 3.0.3\npaths:\n  /a: {$ref: 'link/a.yaml'}\n",
      'real/a.yaml': 'get: {responses: {}}\n',
    });
    symlinkSync(path.join(dir, 'real'), path.join(dir, 'link'));
    const reader = folderSpecReader(dir);
    await expect(bundleSpec('http.yaml', reader)).rejects.toThrow(/never URLs/);
    await expect(bundleSpec('up.yaml', reader)).rejects.toThrow(/never URLs/);
    await expect(bundleSpec('linked.yaml', reader)).rejects.toThrow(SpecReadError);
    await expect(bundleSpec('linked.yaml', reader)).rejects.toThrow(/symbolic link/);
  });

  it('generate: a document outside the answers folder and the current folder is refused (exit 2, nothing written)', async () => {
    const dir = tempDir();
    const elsewhere = tempDir();
    write(elsewhere, { 'api.yaml': readFileSync(path.join(EXAMPLES, 'saas-platform.openapi.yaml'), 'utf8') });
    const answers = { ...exampleAnswers('saas-platform'), openapi: { path: path.join(elsewhere, 'api.yaml') } };
    delete (answers as Json).$schema;
    write(dir, { 'a/rl.answers.json': JSON.stringify(answers) });
    const ctx = { cwd: path.join(dir, 'a'), stdout: () => {}, stderr: () => {}, today: () => DATE };
    const run = runGenerate(ctx, { answers: 'rl.answers.json', format: 'markdown', out: 'doc.md', codeDir: 'code' });
    await expect(run).rejects.toThrow(UserError);
    await expect(runGenerate(ctx, { answers: 'rl.answers.json', format: 'markdown', out: 'doc.md', codeDir: 'code' })).rejects.toThrow(
      /openapi\.path in rl\.answers\.json .*outside/,
    );
    await expect(loadOpenApi(ctx, { openapi: { path: 'missing.yaml' } }, path.join(dir, 'a', 'rl.answers.json'))).rejects.toThrow(
      /missing\.yaml.*does not exist/,
    );
  });

  it('generate --openapi-merged writes the overlay and the merged document into the code folder', async () => {
    const dir = tempDir();
    const ctx = { cwd: dir, stdout: () => {}, stderr: () => {}, today: () => DATE };
    await runGenerate(ctx, {
      example: 'consumer-auth',
      format: 'markdown',
      out: 'doc.md',
      codeDir: 'code',
      date: DATE,
      openapiMerged: true,
    });
    const overlay = parseYaml(readFileSync(path.join(dir, 'code', OVERLAY_PATH), 'utf8'));
    const merged = parseYaml(readFileSync(path.join(dir, 'code', MERGED_PATH), 'utf8'));
    expect(overlay.actions.length).toBeGreaterThan(0);
    expect(merged.paths['/api/feed'].get['x-rate-limit'].headers).toBe('full');
    expect(readFileSync(path.join(dir, 'code', 'README.md'), 'utf8')).toContain(OVERLAY_PATH);
    // a second run in another folder: the same bytes
    const other = tempDir();
    await runGenerate(
      { ...ctx, cwd: other },
      { example: 'consumer-auth', format: 'markdown', out: 'doc.md', codeDir: 'code', date: DATE, openapiMerged: true },
    );
    for (const p of [OVERLAY_PATH, MERGED_PATH, SPECTRAL_PATH]) {
      expect(readFileSync(path.join(other, 'code', p), 'utf8'), p).toBe(readFileSync(path.join(dir, 'code', p), 'utf8'));
    }
    await expect(runGenerate(ctx, { example: 'minimal-generic', out: 'x.md', codeDir: 'code2', openapiMerged: true })).rejects.toThrow(
      /--openapi-merged: needs the API's OpenAPI document/,
    );
  });
});
