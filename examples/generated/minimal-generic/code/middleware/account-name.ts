// rl-design 0.1.0 runtime, copied verbatim from the rl-design package. Do not edit: generate again.
/**
 * The account name an auth request tries, for the rules keyed on it (identity "username"), when
 * identify() gives none: a field of the parsed body, else the user-id of an HTTP Basic
 * Authorization header, which is how OAuth 2.0 clients send their client_id to a token endpoint
 * (RFC 6749 section 2.3.1). The limiter asks for it only on routes of such rules, and only
 * when identify() gave no name: no other request reads the body or the header.
 */
import { textOf } from './keys.js';
import type { RequestHeaders } from './types.js';

/** The body fields the account name is read from, in this order (the document lists the same). */
export const USERNAME_FIELDS: readonly string[] = ['username', 'email', 'login', 'client_id'];

/** The account name in a parsed body: the input's body, else req.body (Express, Fastify). */
export function usernameFromBody(input: { readonly body?: unknown; readonly req: unknown }): string | undefined {
  const req = input.req;
  const body =
    input.body !== undefined ? input.body : req !== null && typeof req === 'object' ? (req as { body?: unknown }).body : undefined;
  if (body === null || typeof body !== 'object') return undefined;
  for (const field of USERNAME_FIELDS) {
    const value = textOf((body as Record<string, unknown>)[field]);
    if (value !== undefined) return value;
  }
  return undefined;
}

/** Standard base64 (RFC 4648 section 4), padding optional. */
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
/** "Basic", in any case, then the credentials after one or more spaces. */
const BASIC = /^[ \t]*basic[ \t]+([^ \t]+)[ \t]*$/i;

/** application/x-www-form-urlencoded decoding: + is a space, then percent escapes; a malformed escape leaves the text as sent. */
function formDecode(text: string): string {
  const spaced = text.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(spaced);
  } catch {
    return text;
  }
}

/**
 * The user-id of an HTTP Basic Authorization header value: base64 decoded, the part before the
 * first ':', form-urlencoded decoded (RFC 6749 section 2.3.1 encodes client_id that way before
 * joining it with the secret). Undefined for another scheme, invalid base64, no ':' or an empty name.
 */
export function basicUsername(authorization: string): string | undefined {
  const match = BASIC.exec(authorization);
  const token = match?.[1];
  if (token === undefined || !BASE64.test(token) || token.replace(/=+$/, '').length % 4 === 1) return undefined;
  if (token.includes('=') && token.length % 4 !== 0) return undefined;
  const decoded = Buffer.from(token, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return textOf(formDecode(decoded.slice(0, colon)));
}

/** The account name of an HTTP Basic Authorization header among the request's headers (Node's, or a fetch Headers). */
export function usernameFromHeaders(headers: RequestHeaders | undefined): string | undefined {
  if (headers === undefined) return undefined;
  const get = (headers as { get?: unknown }).get;
  const value =
    typeof get === 'function'
      ? (headers as { get(name: string): string | null }).get('authorization')
      : (headers as { readonly [name: string]: unknown }).authorization;
  return typeof value === 'string' ? basicUsername(value) : undefined;
}

/**
 * The account name an auth request tries when identify() gives none: a body field, else an
 * HTTP Basic header's user-id (the header is read only when the body names no account).
 */
export function usernameOfRequest(input: {
  readonly body?: unknown;
  readonly req: unknown;
  readonly headers?: RequestHeaders | undefined;
}): string | undefined {
  return usernameFromBody(input) ?? usernameFromHeaders(input.headers);
}
