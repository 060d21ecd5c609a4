/**
 * A parameter route and a fixed path it also matches (GET /parts/:sku and GET /parts/search):
 * every gateway file counts a request under the edge rules of the endpoint that owns it, the
 * most specific route, as the middleware's router picks it. /parts/search counts under the
 * search rule only, /parts/abc under the part rule only.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAnswers } from '../../src/answers/load.js';
import type { Answers } from '../../src/answers/schema.js';
import { buildDesign } from '../../src/design/build.js';
import type { Design, Gateway } from '../../src/design/model.js';
import { generateNginx } from '../../src/codegen/gateway/nginx.js';
import { burst, nginxPrefix, nginxTest, startNginx, type NginxPrefix, type RunningNginx } from './support/nginx.js';

const FIXTURE = new URL('../fixtures/edge-cost/kong-search.answers.json', import.meta.url);

function answersFor(gateway: Gateway): Answers {
  const answers = parseAnswers(readFileSync(FIXTURE, 'utf8'), 'kong-search.answers.json');
  return { ...answers, stack: { ...answers.stack, gateway } };
}

function designFor(gateway: Gateway): Design {
  return buildDesign(answersFor(gateway), { date: '2026-12-03' });
}

const PART = 'anonymous-per-ip';
const SEARCH = 'anonymous-per-ip-cost-3';

describe('nginx: a search call is counted in the search zone only', () => {
  const design = designFor('nginx');
  const enforce = (content: string): string => content.replace('limit_req_dry_run on;', 'limit_req_dry_run off;');
  let prefix: NginxPrefix;
  let nginx: RunningNginx;

  beforeAll(async () => {
    prefix = await nginxPrefix(generateNginx(design), enforce);
    nginx = await startNginx(prefix);
  });
  afterAll(async () => {
    await nginx?.stop();
    prefix?.remove();
  });

  it('nginx -t accepts the config', async () => {
    const result = await nginxTest(prefix);
    expect(result.ok, result.output).toBe(true);
  });

  it('a real nginx: the searches a client makes leave its whole part allowance', async () => {
    const part = design.rules.find((r) => r.id === PART)!;
    const search = design.rules.find((r) => r.id === SEARCH)!;
    expect(part.endpoints).toEqual(['part']);
    expect(search.endpoints).toEqual(['search']);
    // the searches pass up to the search zone's burst, then 429
    const searches = await burst(nginx.port, 40, '/parts/search');
    const passed = searches.filter((r) => r.status === 200).length;
    expect(passed).toBeGreaterThanOrEqual(1 + (search.burst as number));
    expect(searches.some((r) => r.status === 429)).toBe(true);
    // right after them, the part zone still admits its whole burst at once: no search was counted there
    const parts = await burst(nginx.port, 1 + (part.burst as number), '/parts/abc-123');
    expect(parts.map((r) => r.status).filter((s) => s !== 200)).toEqual([]);
  });
});
