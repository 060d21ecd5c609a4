// rl-design 0.1.0 runtime, copied verbatim from the rl-design package. Do not edit: generate again.
/**
 * Redis keys: identity values made safe for a key, key patterns with their identity and
 * period slots, and the hash tag that keeps the keys of one check on one cluster slot.
 */
import { createHash } from 'node:crypto';
import type { IdentityKind, RequestIdentity } from './types.js';
import { charCodeAt } from './strings.js';

function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/**
 * An identity value inside a Redis key: braces (hash-tag delimiters), '%', '~', spaces and
 * control characters are percent-encoded, so a value can never end or open a hash tag; a
 * very long value is replaced by its sha256, so keys stay small.
 */
function keyUnsafe(value: string): boolean {
  // a character loop rather than a regular expression: this runs for every request
  for (let i = 0; i < value.length; i++) {
    const c = charCodeAt(value, i);
    if (c <= 0x20 || c === 0x7f || c === 0x7b || c === 0x7d || c === 0x25 || c === 0x7e) return true;
  }
  return false;
}

export function keyPart(value: string): string {
  const safe = keyUnsafe(value)
    ? value.replace(/[\u0000-\u0020\u007f{}%~]/g, (c) => '%' + c.charCodeAt(0).toString(16).padStart(2, '0'))
    : value;
  return safe.length > 128 ? '~' + sha256Hex(value) : safe;
}

/**
 * An identity value as text, whatever shape identify() or the request gave it: a value given as
 * ["victim@x"] or 42 is the text an application's String() would see ("victim@x", "42"), so it
 * meets the same bucket and the same allow and deny lists as the plain string and never skips a
 * rule; an object is one shared text. Empty and absent values are no identity. The rules' keys,
 * the access lists and the penalty box all read identity values through this one function.
 */
export function textOf(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  const text = typeof value === 'string' ? value : typeof value === 'object' && !Array.isArray(value) ? '[object]' : String(value);
  return text.length > 0 ? text : undefined;
}

/** The field of identify()'s answer each of the caller's own identities is read from. */
export const IDENTITY_FIELD = { 'api-key': 'apiKey', user: 'userId', tenant: 'tenantId', session: 'sessionId' } as const;

/** The caller's own identity value of a kind (API key, user, tenant, session) as text; undefined for the others or when absent. */
export function identityValue(kind: IdentityKind, identity: RequestIdentity): string | undefined {
  switch (kind) {
    case 'api-key':
    case 'user':
    case 'tenant':
    case 'session':
      return textOf(identity[IDENTITY_FIELD[kind]]);
    default:
      return undefined;
  }
}

/** sha256 of the normalised account name: case, width and surrounding spaces never make a new key. */
export function usernameKey(username: string): string {
  return sha256Hex(username.normalize('NFKC').trim().toLowerCase());
}

/** The label an identity carries inside a key (a fallback identity brings its own). */
export const IDENTITY_LABEL: Readonly<Record<IdentityKind, string>> = {
  global: '',
  'api-key': 'ak:',
  user: 'u:',
  tenant: 't:',
  session: 's:',
  ip: 'ip:',
  username: 'un:',
};

/**
 * The label a caller takes in the key of a rule keyed on an identity it lacks (a user rule
 * counting a caller known by its API key): the rule's own label, '~', and the label of the
 * identity it is counted by ("u:" and an API key give "u~ak:"). An identity value never holds a
 * '~' (keyPart encodes it; a long value's sha256 form starts with one, followed by hex), so such
 * a key can never be the key of a caller of the rule's own identity, nor a key or identity hash
 * of a rule keyed on the identity it falls back to ({ak:...}): two rules never share a counter,
 * and a hash never meets a command for another type.
 */
export function fallbackLabel(own: string, kind: IdentityKind): string {
  return (own.endsWith(':') ? own.slice(0, -1) : own) + '~' + IDENTITY_LABEL[kind];
}

export type KeyPiece = string | { readonly slot: 'identity' | 'period'; readonly label: string };

/** The label of a key pattern's identity slot ("u:" in {u:<user-id>}); '' when it has none. */
export function identityLabelOf(pieces: readonly KeyPiece[]): string {
  for (const piece of pieces) if (typeof piece !== 'string' && piece.slot === 'identity') return piece.label;
  return '';
}

/** Splits a key pattern such as {t:<tenant-id>}:quota:<yyyy-mm> into text and slots. */
export function parseKeyPattern(pattern: string): KeyPiece[] {
  const out: KeyPiece[] = [];
  const re = /([A-Za-z0-9_-]+:)?<([^<>]*)>/g;
  let last = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(pattern)) !== null) {
    if (m.index > last) out.push(pattern.slice(last, m.index));
    const name = (m[2] ?? '').toLowerCase();
    out.push({ slot: name.indexOf('yyyy') >= 0 ? 'period' : 'identity', label: m[1] ?? '' });
    last = re.lastIndex;
  }
  if (last < pattern.length) out.push(pattern.slice(last));
  return out;
}

export interface Slot {
  /** null keeps the pattern's own label (e.g. t:); a fallback identity brings its own. */
  readonly label: string | null;
  readonly value: string;
}

export function renderKey(prefix: string, pieces: readonly KeyPiece[], slot: Slot | null, period: string): string {
  let out = prefix + ':';
  let placed = slot === null;
  for (const piece of pieces) {
    if (typeof piece === 'string') out += piece;
    else if (piece.slot === 'period') out += piece.label + period;
    else if (slot !== null) {
      out += (slot.label ?? piece.label) + slot.value;
      placed = true;
    }
  }
  // a pattern without an identity placeholder still gets one key per identity
  if (!placed && slot !== null) out += ':' + (slot.label ?? '') + slot.value;
  return out;
}

/**
 * A key pattern with one identity slot and no window slot, split for the per-request
 * concatenation head + label + identity value + tail (what renderKey gives for it).
 * Null for the patterns renderKey handles: no identity slot, a window slot, several slots.
 */
export interface KeyShape {
  readonly head: string;
  /** The pattern's own label (e.g. t:); a fallback identity brings its own. */
  readonly label: string;
  readonly tail: string;
}

export function keyShape(prefix: string, pieces: readonly KeyPiece[]): KeyShape | null {
  let head = prefix + ':';
  let label: string | null = null;
  let tail = '';
  for (const piece of pieces) {
    if (typeof piece === 'string') {
      if (label === null) head += piece;
      else tail += piece;
    } else if (piece.slot === 'period' || label !== null) {
      return null;
    } else {
      label = piece.label;
    }
  }
  return label === null ? null : { head, label, tail };
}

/** The Redis Cluster hash tag of a key: the text inside the first {...}, or null. */
export function hashTag(key: string): string | null {
  const open = key.indexOf('{');
  if (open < 0) return null;
  const close = key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : null;
}
