import { Registry } from 'prom-client';
import { beforeAll, describe, expect, it } from 'vitest';
import { CODE_README_PATH, generateCode } from '../../src/codegen/index.js';
import { generateMiddleware } from '../../src/codegen/middleware/index.js';
import { basicUsername, USERNAME_FIELDS } from '../../src/runtime/middleware/account-name.js';
import { useRedisServer } from '../helpers/redis.js';
import { TOKEN } from './designs.js';
import { type AdapterFramework, type App, FRAMEWORKS, mountAdapter } from './apps.js';
import { designFrom, expectTtlsUnder, freshPrefix, useCompiledMiddleware } from './harness.js';

type Framework = AdapterFramework;

const store = useRedisServer();
const scratch = useCompiledMiddleware(() =>
  Object.fromEntries(FRAMEWORKS.map((f) => [f, generateMiddleware(designFrom({ ...TOKEN, stack: { ...TOKEN.stack, framework: f } }))])),
);
const modules: Partial<Record<Framework, Record<string, unknown>>> = {};

beforeAll(async () => {
  for (const f of FRAMEWORKS) modules[f] = await scratch.load(f, f);
});

/** The token endpoint in a framework, the limiter in front with an identify() that names no account. */
function mount(framework: Framework, prefix: string): Promise<App> {
  const options = {
    redis: store.redis,
    keyPrefix: prefix,
    defaultMode: 'enforce',
    timeoutMs: 2000,
    registry: new Registry(),
    identify: () => ({}),
  };
  return mountAdapter(framework, modules[framework] as Record<string, unknown>, options);
}

/** An Authorization header as RFC 6749 section 2.3.1 builds it: each part form-urlencoded, joined with ':', base64. */
function basic(clientId: string, secret: string, scheme = 'Basic'): string {
  const form = (s: string): string => new URLSearchParams({ s }).toString().slice(2);
  return `${scheme} ${Buffer.from(`${form(clientId)}:${form(secret)}`).toString('base64')}`;
}

/** A client-credentials token request from a client address, with an Authorization header and/or form fields; its status. */
async function token(app: App, ip: string, authorization: string | null, form: Record<string, string> = {}): Promise<number> {
  const r = await fetch(`${app.url}/oauth/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-forwarded-for': ip,
      ...(authorization !== null ? { authorization } : {}),
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', ...form }).toString(),
  });
  await r.arrayBuffer();
  return r.status;
}

describe.each(FRAMEWORKS)('%s middleware, a token endpoint', (framework) => {
  it('counts a client authenticating with HTTP Basic per client id, whatever address it comes from', async () => {
    const prefix = freshPrefix('basic');
    const app = await mount(framework, prefix);
    try {
      // a client id with a space and a colon: form-urlencoded in the header ("My+Client%3A1")
      const tries = [
        await token(app, '203.0.113.1', basic('My Client:1', 'guess-1')),
        await token(app, '203.0.113.2', basic('My Client:1', 'guess-2', 'basic')),
        await token(app, '203.0.113.3', basic('My Client:1', 'guess-3', 'BASIC')),
      ];
      expect(tries).toEqual([200, 200, 200]);
      // a fourth address: the per-IP row has room, the client's row does not
      expect(await token(app, '203.0.113.4', basic('My Client:1', 'guess-4'))).toBe(429);
      // the same account as the form field names it (the account name is normalised: case)
      expect(await token(app, '203.0.113.5', null, { client_id: 'my client:1', client_secret: 'guess-5' })).toBe(429);
      // another client is counted apart
      expect(await token(app, '203.0.113.6', basic('other-client', 'secret'))).toBe(200);
      const keys = await store.redis.keys(`${prefix}:*`);
      expect(keys.filter((k) => k.includes(':un:'))).toHaveLength(2);
      // only a hash of the client id is stored
      expect(keys.some((k) => /client/i.test(k))).toBe(false);
    } finally {
      await app.close();
    }
    await expectTtlsUnder(store.redis, prefix);
  });

  it('still reads the client id of a form body first, and a malformed escape in the header counts as sent', async () => {
    const prefix = freshPrefix('basic');
    const app = await mount(framework, prefix);
    try {
      const form = (i: number): Promise<number> =>
        token(app, `198.51.100.${i}`, null, { client_id: 'form-client', client_secret: `guess-${i}` });
      expect([await form(1), await form(2), await form(3), await form(4)]).toEqual([200, 200, 200, 429]);
      // the body names the account: a header naming another is not read
      expect(await token(app, '198.51.100.5', basic('fresh-client', 'x'), { client_id: 'form-client' })).toBe(429);
      // "%zz" is no percent escape: the name is the text as sent, the same as a form field "a%zz"
      const raw = `Basic ${Buffer.from('a%zz:secret').toString('base64')}`;
      expect([await token(app, '198.51.100.6', raw), await token(app, '198.51.100.7', raw), await token(app, '198.51.100.8', raw)]).toEqual(
        [200, 200, 200],
      );
      expect(await token(app, '198.51.100.9', null, { client_id: 'a%zz' })).toBe(429);
    } finally {
      await app.close();
    }
    await expectTtlsUnder(store.redis, prefix);
  });

  it('a header that is not HTTP Basic, or does not decode, names no account: only the per-IP row counts it', async () => {
    const prefix = freshPrefix('basic');
    const app = await mount(framework, prefix);
    try {
      const malformed = [
        'Basic acme:secret', // not base64
        `Basic ${Buffer.from('acme').toString('base64')}`, // no ':'
        `Basic ${Buffer.from('acme:secret').toString('base64')}!`, // a character outside base64
        `Bearer ${Buffer.from('acme:secret').toString('base64')}`, // another scheme
        `Basic ${Buffer.from(':secret').toString('base64')}`, // an empty client id
        'Basic',
      ];
      // from as many addresses: none of them reaches a per-account row
      const spread: number[] = [];
      for (const [i, header] of malformed.entries()) spread.push(await token(app, `192.0.2.${i + 1}`, header));
      expect(spread).toEqual(malformed.map(() => 200));
      expect((await store.redis.keys(`${prefix}:*`)).some((k) => k.includes(':un:'))).toBe(false);
      // nor did they spend the account "acme" a well-formed header names: 3 tries, then refused
      const good: number[] = [];
      for (let i = 0; i < 4; i++) good.push(await token(app, `192.0.2.${20 + i}`, basic('acme', `guess-${i}`)));
      expect(good).toEqual([200, 200, 200, 429]);
      // one address sending a malformed header is still counted by the per-IP row (5 an hour)
      const one: number[] = [];
      for (let i = 0; i < 6; i++) one.push(await token(app, '192.0.2.99', malformed[0] as string));
      expect(one).toEqual([200, 200, 200, 200, 200, 429]);
    } finally {
      await app.close();
    }
    await expectTtlsUnder(store.redis, prefix);
  });
});

describe('the account name of an HTTP Basic header', () => {
  const b64 = (text: string): string => Buffer.from(text).toString('base64');

  it('is the form-decoded text before the first colon, whatever case the scheme is in', () => {
    expect(basicUsername(`Basic ${b64('My+Client%3A1:s3cr:et')}`)).toBe('My Client:1');
    expect(basicUsername(`bAsIc  ${b64('client%20a:x')}`)).toBe('client a');
    // unpadded base64 decodes too; UTF-8 names stay whole
    expect(basicUsername(`Basic ${b64('ab:c').replace(/=+$/, '')}`)).toBe('ab');
    expect(basicUsername(`Basic ${b64('%C3%A9l%C3%A8ve:x')}`)).toBe('élève');
    expect(basicUsername(`Basic ${b64('élève:x')}`)).toBe('élève');
    // a malformed escape: the text as sent
    expect(basicUsername(`Basic ${b64('50%+off:x')}`)).toBe('50%+off');
  });

  it('names no account for another scheme, text that is not base64, no colon or an empty name', () => {
    for (const header of [
      `Bearer ${b64('a:b')}`,
      'Basic a:b',
      `Basic ${b64('a:b')}.`,
      `Basic ${b64('abc:d')}==`,
      'Basic QQ=',
      'Basic Q',
      `Basic ${b64('nocolon')}`,
      `Basic ${b64(':secret')}`,
      'Basic',
      'Basic ',
      '',
    ]) {
      expect(basicUsername(header), header).toBeUndefined();
    }
  });

  it('is where the document, the code README and the port guide say the account name comes from', () => {
    const design = designFrom(TOKEN);
    const text = design.enforcement.dualKeyAuth ?? '';
    const fields = `${USERNAME_FIELDS.slice(0, -1).join(', ')} or ${USERNAME_FIELDS.at(-1) ?? ''}`;
    expect(text).toContain(`else the body fields ${fields}, else the user-id of an HTTP Basic Authorization header`);
    const readme = generateCode(design).find((f) => f.path === CODE_README_PATH)?.content ?? '';
    expect(readme).toContain(`neither the parsed body (fields ${fields}) nor an HTTP Basic Authorization header (its user-id) names it`);
    const ported = generateCode(designFrom({ ...TOKEN, stack: { ...TOKEN.stack, language: 'Go', framework: 'other' } }));
    expect(ported.map((f) => f.content).join('\n')).toContain("else an HTTP Basic Authorization header's user-id");
  });
});
