/**
 * The client address a rule keys on: the TCP peer, or the first untrusted hop of
 * X-Forwarded-For when the peer is a proxy we run; IPv6 keyed per network.
 */

import { keyPart } from './keys.js';
import type { LimiterInput } from './types.js';

/** 4 bytes (IPv4) or 16 bytes (IPv6). */
export type IpBytes = Uint8Array;

function parseIPv4(text: string): IpBytes | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const part = parts[i] ?? '';
    // no leading zeros: "010" is octal to some parsers and decimal to others
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part)) return null;
    const n = Number(part);
    if (n > 255) return null;
    out[i] = n;
  }
  return out;
}

function parseGroups(text: string): number[] | null {
  if (text === '') return [];
  const out: number[] = [];
  for (const group of text.split(':')) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return null;
    out.push(parseInt(group, 16));
  }
  return out;
}

function parseIPv6(input: string): IpBytes | null {
  let text = input;
  let tail: IpBytes | null = null;
  const lastColon = text.lastIndexOf(':');
  if (lastColon < 0) return null;
  if (text.indexOf('.', lastColon) > lastColon) {
    // an embedded IPv4 tail (::ffff:192.0.2.1) stands for the last two groups
    tail = parseIPv4(text.slice(lastColon + 1));
    if (!tail) return null;
    text = text.slice(0, lastColon + 1) + '0:0';
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const head = parseGroups(halves[0] ?? '');
  if (!head) return null;
  let groups: number[];
  if (halves.length === 2) {
    const rest = parseGroups(halves[1] ?? '');
    if (!rest) return null;
    const missing = 8 - head.length - rest.length;
    if (missing < 1) return null;
    groups = head.concat(new Array<number>(missing).fill(0), rest);
  } else {
    if (head.length !== 8) return null;
    groups = head;
  }
  const out = new Uint8Array(16);
  groups.forEach((g, i) => {
    out[2 * i] = g >> 8;
    out[2 * i + 1] = g & 0xff;
  });
  if (tail) out.set(tail, 12);
  return out;
}

/**
 * Parses one address as it appears in a socket or an X-Forwarded-For entry: IPv4, IPv6,
 * [IPv6]:port, IPv4:port, with an optional zone (%eth0). IPv4-mapped IPv6 (::ffff:a.b.c.d)
 * becomes the IPv4 address, so one client never has two keys.
 */
export function parseIp(input: string): IpBytes | null {
  let text = input.trim();
  if (text.length === 0 || text.length > 64) return null;
  if (text.startsWith('[')) {
    const end = text.indexOf(']');
    if (end < 0) return null;
    text = text.slice(1, end);
  } else if (text.indexOf(':') >= 0 && text.indexOf(':') === text.lastIndexOf(':') && text.indexOf('.') >= 0) {
    text = text.slice(0, text.indexOf(':'));
  }
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  const bytes = text.indexOf(':') >= 0 ? parseIPv6(text) : parseIPv4(text);
  if (bytes && bytes.length === 16) {
    let mapped = bytes[10] === 0xff && bytes[11] === 0xff;
    for (let i = 0; i < 10 && mapped; i++) if (bytes[i] !== 0) mapped = false;
    if (mapped) return bytes.slice(12);
  }
  return bytes;
}

export interface Cidr {
  readonly bytes: IpBytes;
  readonly bits: number;
}

/** An IPv4 or IPv6 CIDR (a bare address is a /32 or /128). Throws on anything else. */
export function parseCidr(text: string): Cidr {
  const slash = text.indexOf('/');
  const address = slash >= 0 ? text.slice(0, slash) : text;
  const bytes = parseIp(address);
  if (!bytes) throw new Error('rate limiter: not an IP address or CIDR: ' + JSON.stringify(text));
  const isV6Text = address.indexOf(':') >= 0;
  let bits = bytes.length * 8;
  if (slash >= 0) {
    const raw = text.slice(slash + 1);
    if (!/^[0-9]{1,3}$/.test(raw)) throw new Error('rate limiter: bad prefix length in ' + JSON.stringify(text));
    bits = Number(raw);
    // an IPv4-mapped IPv6 range (::ffff:10.0.0.0/104) is the IPv4 range 10.0.0.0/8
    if (isV6Text && bytes.length === 4) bits -= 96;
    if (bits < 0 || bits > bytes.length * 8) throw new Error('rate limiter: bad prefix length in ' + JSON.stringify(text));
  }
  return { bytes, bits };
}

export function inCidr(ip: IpBytes, cidr: Cidr): boolean {
  if (ip.length !== cidr.bytes.length) return false;
  const whole = cidr.bits >> 3;
  for (let i = 0; i < whole; i++) if (ip[i] !== cidr.bytes[i]) return false;
  const rest = cidr.bits & 7;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return ((ip[whole] ?? 0) & mask) === ((cidr.bytes[whole] ?? 0) & mask);
}

/** Key text for an address: dotted IPv4, or the IPv6 network of prefixLength bits. */
export function formatIp(ip: IpBytes, ipv6PrefixLength = 128): string {
  if (ip.length === 4) return ip.join('.');
  const bytes = ip.slice();
  const bits = Math.max(0, Math.min(128, ipv6PrefixLength));
  for (let i = 0; i < 16; i++) {
    const keep = Math.max(0, Math.min(8, bits - i * 8));
    bytes[i] = (bytes[i] ?? 0) & ((0xff << (8 - keep)) & 0xff);
  }
  const groups: number[] = [];
  for (let i = 0; i < 8; i++) groups.push(((bytes[2 * i] ?? 0) << 8) | (bytes[2 * i + 1] ?? 0));
  // RFC 5952: compress the longest run (two or more) of zero groups
  let bestStart = -1;
  let bestLength = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength && j - i >= 2) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  const text = bestStart < 0 ? hex.join(':') : hex.slice(0, bestStart).join(':') + '::' + hex.slice(bestStart + bestLength).join(':');
  return bits < 128 ? text + '/' + bits : text;
}

/**
 * The client address: the TCP peer, unless the peer is one of our trusted proxies. Then
 * X-Forwarded-For is walked from the right (each entry was appended by the hop to its
 * right), skipping trusted proxies; the first untrusted entry is the client. Entries left
 * of it were written by the client and never matter, so rotating them changes nothing.
 * An unparsable entry stops the walk at the last address we can vouch for. Null when the
 * peer is unknown.
 */
export function clientAddress(
  remoteAddress: string | undefined,
  forwardedFor: string | readonly string[] | undefined,
  trusted: readonly Cidr[],
): IpBytes | null {
  const peer = remoteAddress === undefined ? null : parseIp(remoteAddress);
  if (!peer) return null;
  const isTrusted = (ip: IpBytes): boolean => trusted.some((c) => inCidr(ip, c));
  let client = peer;
  if (isTrusted(peer) && forwardedFor !== undefined) {
    const header = typeof forwardedFor === 'string' ? forwardedFor : forwardedFor.join(',');
    const entries = header.split(',');
    for (let i = entries.length - 1; i >= 0; i--) {
      const hop = parseIp(entries[i] ?? '');
      if (!hop) break;
      client = hop;
      if (!isTrusted(hop)) break;
    }
  }
  return client;
}

/** The client address as a key holds it (clientAddress, IPv6 per network), or 'unknown'. */
export function resolveClientIp(
  remoteAddress: string | undefined,
  forwardedFor: string | readonly string[] | undefined,
  trusted: readonly Cidr[],
  ipv6PrefixLength = 64,
): string {
  const client = clientAddress(remoteAddress, forwardedFor, trusted);
  return client === null ? 'unknown' : formatIp(client, ipv6PrefixLength);
}

/** Where one request comes from, worked out once for everything that asks. */
export interface Client {
  /** The address itself, for the address lists; null when unknown (or the custom function's text is no address). */
  readonly address: IpBytes | null;
  /** What a key holds: dotted IPv4, the IPv6 network, the custom function's text made key-safe, or 'unknown'. */
  readonly key: string;
}

/** A request as the parts that need its client see it: its input, and its client once worked out. */
export interface ClientMemo<TReq> {
  readonly input: LimiterInput<TReq>;
  client: Client | null;
}

/** Clients of the trusted-hop walk kept by their peer and X-Forwarded-For (see clientOfRequest). */
const KNOWN_CLIENTS = 10000;
/** Longest peer + X-Forwarded-For text kept (a longer one is walked every time): bounds the cache's memory. */
const KNOWN_CLIENT_TEXT = 256;

/**
 * The client of a request, worked out on first use and kept on the request, so the deny list,
 * the allowlist, the penalty box and the rules keyed on the address resolve it once and agree:
 * the application's own function (options.identities.ip or options.clientIp) when it names one,
 * else the trusted-hop walk.
 * The walk's answer depends only on the peer and the X-Forwarded-For text, and parsing them
 * costs a few microseconds (more than the rest of a decision), so its answers are kept by that
 * text: the last KNOWN_CLIENTS of them, forgotten all at once when full (a caller who sends a
 * new X-Forwarded-For every time only makes the walk run, never changes its answer).
 */
export function clientOfRequest<TReq>(
  trusted: readonly Cidr[],
  ipv6PrefixLength: number,
  custom: ((req: TReq) => string | undefined) | undefined,
): (request: ClientMemo<TReq>) => Client {
  const known = new Map<string, Client>();
  const walk = (remoteAddress: string | undefined, forwardedFor: string | readonly string[] | undefined): Client => {
    const address = clientAddress(remoteAddress, forwardedFor, trusted);
    return { address, key: address === null ? 'unknown' : formatIp(address, ipv6PrefixLength) };
  };
  return (request) => {
    if (request.client !== null) return request.client;
    const input = request.input;
    const given = custom ? custom(input.req) : undefined;
    let client: Client;
    if (given) {
      const address = parseIp(given);
      client = { address, key: address ? formatIp(address, ipv6PrefixLength) : keyPart(given) };
    } else {
      const peer = input.remoteAddress;
      const forwarded = input.forwardedFor;
      // the peer alone, or the peer and the header ('\n' is in neither: no two inputs share a text)
      const text =
        peer === undefined || (forwarded !== undefined && typeof forwarded !== 'string')
          ? null
          : forwarded === undefined
            ? peer
            : peer + '\n' + forwarded;
      const kept = text === null ? undefined : known.get(text);
      if (kept !== undefined) client = kept;
      else {
        client = walk(peer, forwarded);
        if (text !== null && text.length <= KNOWN_CLIENT_TEXT) {
          if (known.size >= KNOWN_CLIENTS) known.clear();
          known.set(text, client);
        }
      }
    }
    request.client = client;
    return client;
  };
}
