/**
 * A Koa API behind nginx that already limits requests there (test/fixtures/review/
 * koa-existing-nginx-mixed): a server-level limit_req per client IP (perip), a login location
 * with a limit_req of its own (login), and limit_req_status 429 set in http {}. What the
 * document and the check say about those lines must be what a real nginx does with them beside
 * the generated files.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Answers } from '../../src/answers/schema.js';
import { generateCode } from '../../src/codegen/index.js';
import { checkDesign } from '../../src/constraints/index.js';
import { buildDesign } from '../../src/design/build.js';
import { renderMarkdown } from '../../src/render/markdown/index.js';
import { burst, get, nginxTest, useRunningNginx } from './support/nginx.js';

const FIXTURE = new URL('../fixtures/review/koa-existing-nginx-mixed.answers.json', import.meta.url);

function answers(change: (raw: Record<string, any>) => void = () => {}) {
  const raw = JSON.parse(readFileSync(FIXTURE, 'utf8'));
  delete raw.$schema;
  change(raw);
  return Answers.parse(raw);
}

const design = buildDesign(answers(), { date: '2026-01-01' });
const files = generateCode(design);
const gateway = files.filter((f) => f.path.startsWith('gateway/'));
const md = renderMarkdown({ design, checks: checkDesign(design, files) }, { layout: 'single' })[0]?.content ?? '';

/**
 * The user's nginx as the answers describe it, around the generated files: limit_req_status and
 * real_ip_header in http {} (which the generated nginx.conf leaves out), zone perip used by a
 * server-level limit_req, zone login by a location of its own. `loginDryRunOff` adds what the
 * document tells the user to add to that location.
 */
function withExisting(loginDryRunOff: boolean) {
  return (content: string, path: string): string => {
    if (path === 'gateway/nginx.conf') {
      return [
        'limit_req_status 429;',
        'real_ip_header X-Forwarded-For;',
        'limit_req_zone $binary_remote_addr zone=perip:1m rate=10r/s;',
        'limit_req_zone $binary_remote_addr zone=login:1m rate=6r/m;',
        content,
      ].join('\n');
    }
    if (path === 'gateway/nginx-server.conf') {
      return [
        'limit_req zone=perip burst=20 nodelay;',
        content,
        'location = /api/auth/login {',
        '    limit_req zone=login;',
        ...(loginDryRunOff ? ['    limit_req_dry_run off;'] : []),
        '    root www;',
        '    default_type text/plain;',
        '    try_files /ok.txt =404;',
        '}',
      ].join('\n');
    }
    return content;
  };
}

describe('limit_req_status 429 already set in http {}', () => {
  it('the generated nginx.conf leaves it to the configuration, and the Retry-After check accepts that', () => {
    const http = gateway.find((f) => f.path === 'gateway/nginx.conf')!.content;
    expect(http).toMatch(/^# limit_req_status 429; left out: \/etc\/nginx\/nginx.conf:21 already sets limit_req_status 429 in http \{\}$/m);
    const contract = checkDesign(design, files).find((c) => c.id === 'response-contract')!;
    expect(contract.messages).toEqual([]);
    expect(md).toContain('9 of 9 constraints pass.');
  });

  it('an http-level limit_req_status other than 429 still fails the check, naming it, and the document says to change it', () => {
    const d = buildDesign(
      answers((raw) => {
        raw.existing.nginx[0].value = '503';
      }),
      { date: '2026-01-01' },
    );
    const contract = checkDesign(d, generateCode(d)).find((c) => c.id === 'response-contract')!;
    expect(contract.passed).toBe(false);
    expect(contract.messages.join('\n')).toContain(
      'which sets limit_req_status 503 in http {}: the edge rules refuse with 503, past the error_page 429 that adds Retry-After',
    );
    expect(d.migration?.nginxConflicts.join('\n')).toContain(
      'with it the edge rules refuse with 503, not 429, and never reach the error_page 429 that adds Retry-After and the problem+json body; change it to limit_req_status 429',
    );
  });
});

describe('existing nginx limit_req lines beside the generated limit_req_dry_run on', () => {
  it('the document does not claim they keep enforcing through the shadow period, and says how to keep the location one refusing', () => {
    const retire = design.rollout.steps.find((s) => s.title === 'Retire the existing limiters')!;
    expect(retire.detail).not.toContain('so nothing is unprotected while the new rules only measure');
    expect(retire.detail).toContain(
      'The limiters already in place outside nginx (koa-ratelimit userLimiter (src/app.ts:41)) keep enforcing through the 7-day shadow period. The nginx ones do not',
    );
    expect(design.migration?.dryRun).toHaveLength(2);
    expect(md).toContain('**Existing nginx limits under the generated dry run:**');
    expect(md).toContain('To keep it refusing through the shadow period, add limit_req_dry_run off; to that location');
    const server = gateway.find((f) => f.path === 'gateway/nginx-server.conf')!.content;
    expect(server).toContain('# limit_req_dry_run of their own: the limit_req lines already in your configuration run dry');
  });

  describe('a real nginx, as shipped (dry run on)', () => {
    const running = useRunningNginx(gateway, withExisting(false));

    it('nginx -t accepts the generated files beside the existing directives', async () => {
      const result = await nginxTest(running.prefix);
      expect(result.ok, result.output).toBe(true);
    });

    it('the old server-level perip and the old login location refuse nothing: they run dry with the generated rules', async () => {
      // perip admits 1 + burst 20 at once; 40 at once would see 429s if it refused
      const docs = await burst(running.nginx.port, 40, '/api/docs');
      expect(docs.map((r) => r.status)).toEqual(new Array(40).fill(200));
      // login admits one request per 10 s
      const logins = [];
      for (let i = 0; i < 3; i++) logins.push((await get(running.nginx.port, '/api/auth/login')).status);
      expect(logins).toEqual([200, 200, 200]);
      const log = readFileSync(`${running.prefix.dir}/logs/error.log`, 'utf8');
      expect(log).toMatch(/limiting requests, dry run, excess: [0-9.]+ by zone "perip"/);
      expect(log).toMatch(/limiting requests, dry run, excess: [0-9.]+ by zone "login"/);
    });
  });

  describe('a real nginx, with the limit_req_dry_run off the document tells the user to add to the login location', () => {
    const running = useRunningNginx(gateway, withExisting(true));

    it('the login location refuses again (429 with Retry-After) while perip still runs dry', async () => {
      const first = await get(running.nginx.port, '/api/auth/login');
      const second = await get(running.nginx.port, '/api/auth/login');
      expect(first.status).toBe(200);
      expect(second.status).toBe(429);
      expect(second.headers['retry-after']).toBeDefined();
      const docs = await burst(running.nginx.port, 40, '/api/docs');
      expect(docs.every((r) => r.status === 200)).toBe(true);
    });

    it('a login refused by the old login zone (6r/m) gets a Retry-After no shorter than the real wait, and the document shows that 429', async () => {
      // refuse one login
      let refused: Awaited<ReturnType<typeof get>> | undefined;
      for (let i = 0; i < 3 && !refused; i++) {
        const r = await get(running.nginx.port, '/api/auth/login');
        if (r.status === 429) refused = r;
      }
      expect(refused?.status).toBe(429);
      const at = Date.now();
      const retryAfter = Number(refused?.headers['retry-after']);
      const sleepUntil = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, at + ms - Date.now())));
      // the zone drains one request in 10 s: a retry 1 s later is refused again
      await sleepUntil(1000);
      expect((await get(running.nginx.port, '/api/auth/login')).status).toBe(429);
      // a retry after Retry-After passes
      await sleepUntil(retryAfter * 1000);
      expect((await get(running.nginx.port, '/api/auth/login')).status).toBe(200);
      expect(JSON.parse(refused?.body ?? '{}')).toMatchObject({ retryAfterSeconds: retryAfter, limit: { zones: ['perip', 'login'] } });
      // the document's edge 429 example is the same response
      const example = /refuse a call at the edge, [\s\S]*?```http\n([\s\S]*?)\n```/.exec(md)?.[1] ?? '';
      expect(example).toContain(`Retry-After: ${retryAfter}\n`);
      expect(md).toContain('login, 6r/m: 10 s');
    }, 30_000);
  });
});

describe('the check reads the Retry-After of the 429 page against the zones already in place', () => {
  it('a shipped page whose Retry-After is shorter than the login zone needs fails constraint 3, naming the zone', () => {
    const early = files.map((f) =>
      f.path === 'gateway/nginx-server.conf'
        ? { ...f, content: f.content.replace(/add_header Retry-After \d+ always;/, 'add_header Retry-After 1 always;') }
        : f,
    );
    const contract = checkDesign(design, early).find((c) => c.id === 'response-contract')!;
    expect(contract.passed).toBe(false);
    expect(contract.messages.join('\n')).toContain(
      'a Retry-After of at least 10 s (it sends 1, and the error_page 429 also answers for zone login of your configuration, whose refused clients pass again 10 s later)',
    );
  });
});

describe('what the old limit_req zones admit, per nginx node and for the fleet', () => {
  const row = (id: string): string => md.split('\n').find((l) => l.startsWith(`| \`${id}\` | edge |`)) ?? '';
  const migrationRow = (existing: string, route: string): string =>
    md.split('\n').find((l) => l.startsWith(`| nginx ${existing} (`) && l.includes(`| ${route} |`)) ?? '';

  it('the worst-case table and the migration table give one figure for anonymous-per-ip: 451 at each of the 2 nginx nodes, 902 for the fleet', () => {
    expect(row('anonymous-per-ip')).toContain('| 902 | (1 + 375 + 75/s x 1 s) x 2 nodes |');
    expect(row('anonymous-per-ip')).toContain('One node admits 451 of the 902.');
    const perip = migrationRow('perip', 'GET /api/public/:slug (public-page)');
    expect(perip).toContain(
      '| 62: 31 at each of 2 nginx nodes | anonymous-per-ip: 75 per 1 s, burst 375 (902: 451 at each of 2 nodes) | 902 | WARNING: looser |',
    );
    expect(md).toContain('the new rules admit 902 within any 1 s across the 2 nginx nodes (anonymous-per-ip: 451 at each)');
  });

  it('login, taken over: the old 6r/m counted on each of the 2 nodes (7 a minute at each, 14 for the fleet), the new rule 6 for the fleet: tighter, and said so', () => {
    const login = migrationRow('login', 'POST /api/auth/login (login)');
    expect(login).toContain(
      '| 14: 7 at each of 2 nginx nodes | auth-login-per-ip: 6 per 1 min (6) | 6 | kept (taken over), WARNING: tighter |',
    );
    const item = design.migration?.items.find((i) => i.existing.startsWith('nginx login'));
    expect(item).toMatchObject({ verdict: 'kept', keptMove: 'tighter', oldWithinWindow: 14, newWithinWindow: 6 });
    expect(item?.note).toContain(
      'Warning, tighter: before, one ip could send 7 requests within any 1 min (leaky bucket: one request at once, then its rate) at each nginx node, 14 across the 2 nginx nodes, each counting on its own; the new rules admit 6 within any 1 min for the whole fleet (auth-login-per-ip).',
    );
    const rule = design.rules.find((r) => r.id === 'auth-login-per-ip');
    expect(rule?.title).toBeDefined();
    expect(md).toContain(
      'It is tighter than before, though: each of the 2 nginx nodes counted it on its own, while this row counts it once for the whole fleet',
    );
  });

  describe('a real nginx with the edge rules enforced (limit_req_dry_run off): zone perip, 10r/s burst 20', () => {
    const running = useRunningNginx(gateway, (content, path) =>
      withExisting(false)(content, path).replace(/^limit_req_dry_run on;$/m, 'limit_req_dry_run off;'),
    );

    it('passes 21 of 40 sent at once, and 10 more one second later: the 31 at each node the document states', async () => {
      // the readiness probe of startNginx went through zone perip: let it drain (one request, 100 ms)
      await new Promise((r) => setTimeout(r, 300));
      const start = Date.now();
      const first = await burst(running.nginx.port, 40, '/api/docs');
      const atOnce = first.filter((r) => r.status === 200).length;
      expect(first.filter((r) => r.status === 429)).toHaveLength(40 - atOnce);
      await new Promise((r) => setTimeout(r, Math.max(0, start + 1020 - Date.now())));
      const second = await burst(running.nginx.port, 20, '/api/docs');
      const later = second.filter((r) => r.status === 200).length;
      expect([atOnce, later]).toEqual([21, 10]);
      const node = design.migration?.items.find((i) => i.existing.startsWith('nginx perip'))?.oldNodes;
      expect(node).toEqual({ k: 2, each: atOnce + later, unit: 'nginx node' });
    });
  });
});
