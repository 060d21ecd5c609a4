/**
 * Redis Cluster key slots: CRC16 (the XMODEM variant: polynomial 0x1021, initial value 0,
 * no reflection, no final XOR) of the key's hash tag, modulo 16384, exactly as Redis computes
 * it (cluster.c keyHashSlot). Used to show that every multi-key script of a design keeps its
 * keys in one slot, which a script on a Redis Cluster requires.
 */
import { hashTag as runtimeHashTag } from '../runtime/middleware/keys.js';

const TABLE: Uint16Array = (() => {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    table[i] = crc;
  }
  return table;
})();

/** CRC16-XMODEM of the bytes (a string is taken as UTF-8, as Redis sees it). */
export function crc16(data: string | Uint8Array): number {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  let crc = 0;
  for (const byte of bytes) crc = ((crc << 8) & 0xffff) ^ (TABLE[((crc >> 8) ^ byte) & 0xff] as number);
  return crc;
}

/**
 * The part of a key Redis hashes: the text between the first `{` and the first `}` after
 * it, when that is not empty (the runtime's own reading of the tag); otherwise the whole key.
 */
export function hashTag(key: string): string | undefined {
  return runtimeHashTag(key) ?? undefined;
}

export const SLOTS = 16384;

/** The cluster slot of a key (0..16383). */
export function keySlot(key: string): number {
  const bytes = Buffer.from(key, 'utf8');
  const open = bytes.indexOf(0x7b);
  if (open >= 0) {
    const close = bytes.indexOf(0x7d, open + 1);
    if (close > open + 1) return crc16(bytes.subarray(open + 1, close)) % SLOTS;
  }
  return crc16(bytes) % SLOTS;
}
