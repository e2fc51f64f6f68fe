/**
 * Machine clients' identifiers and secrets (pure: no store, no clock).
 *
 * - client id `tgc_` + 26 base32 characters (128 random bits): public, in logs and URLs;
 * - client secret `tgs_` + 43 base64url characters (256 random bits);
 * - API key id `tgkid_` + 16 base32 characters (80 random bits): public;
 * - API key `tgk_<16 id characters>_<43 secret characters>_<6 checksum characters>`:
 *   its own key id, a 256-bit secret, and a CRC-32 of everything before it in
 *   base62, so that secret scanners recognise a key and a mistyped one is
 *   refused before any lookup.
 *
 * Secrets are stored only as SHA-256 digests: a 256-bit random secret has no
 * dictionary to attack, so a fast hash protects it as well as bcrypt would
 * and keeps its check off the password pool. Digests are compared in
 * constant time.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const CLIENT_ID_PREFIX = 'tgc_';
export const CLIENT_SECRET_PREFIX = 'tgs_';
export const API_KEY_PREFIX = 'tgk_';
export const KEY_ID_PREFIX = 'tgkid_';

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_ID_CHARS = 16;
const SECRET_CHARS = 43;
const CHECKSUM_CHARS = 6;
/** An API key's length: 71 characters. */
export const API_KEY_LENGTH =
  API_KEY_PREFIX.length + KEY_ID_CHARS + 1 + SECRET_CHARS + 1 + CHECKSUM_CHARS;

const CLIENT_ID = /^tgc_[a-z2-7]{26}$/;
const KEY_ID = /^tgkid_[a-z2-7]{16}$/;
const API_KEY = /^tgk_([a-z2-7]{16})_([A-Za-z0-9_-]{43})_([0-9A-Za-z]{6})$/;

/** A new client id (`tgc_…`, 128 random bits). */
export function newClientId(): string {
  return CLIENT_ID_PREFIX + base32(randomBytes(16)).slice(0, 26);
}

/** A new client secret (`tgs_…`, 256 random bits). */
export function newClientSecret(): string {
  return CLIENT_SECRET_PREFIX + randomBytes(32).toString('base64url');
}

export function isClientId(value: string): boolean {
  return CLIENT_ID.test(value);
}

export function isKeyId(value: string): boolean {
  return KEY_ID.test(value);
}

/** A new API key and its id; the key holds the id, so a lookup needs nothing else. */
export function newApiKey(): { keyId: string; apiKey: string } {
  const id = base32(randomBytes(10)).slice(0, KEY_ID_CHARS);
  const body = `${API_KEY_PREFIX}${id}_${randomBytes(32).toString('base64url')}`;
  return { keyId: KEY_ID_PREFIX + id, apiKey: `${body}_${checksum(body)}` };
}

/**
 * The key id an API key names, when it is well formed and its checksum
 * holds; null otherwise (refuse it without a lookup).
 */
export function apiKeyId(apiKey: string): string | null {
  if (apiKey.length !== API_KEY_LENGTH) return null;
  const match = API_KEY.exec(apiKey);
  if (match === null) return null;
  const body = apiKey.slice(0, API_KEY_LENGTH - CHECKSUM_CHARS - 1);
  if (checksum(body) !== match[3]) return null;
  return KEY_ID_PREFIX + match[1];
}

/** What the store keeps of a secret: its SHA-256, hex. */
export function secretDigest(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Whether `secret` is the one `digest` was made of, in time independent of where they differ. */
export function secretMatches(secret: string, digest: string): boolean {
  const expected = Buffer.from(digest, 'hex');
  const actual = createHash('sha256').update(secret, 'utf8').digest();
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

/** RFC 4648 base32, lower case, unpadded. */
export function base32(bytes: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

/** CRC-32 of `text` in six base62 digits (62^6 > 2^32): what ends an API key or refresh token. */
export function checksum(text: string): string {
  let crc = crc32(Buffer.from(text, 'utf8'));
  let out = '';
  for (let i = 0; i < CHECKSUM_CHARS; i++) {
    out = BASE62[crc % 62] + out;
    crc = Math.floor(crc / 62);
  }
  return out;
}

let crcTable: Uint32Array | undefined;

function crc32(bytes: Buffer): number {
  const table = (crcTable ??= makeCrcTable());
  let crc = 0xffffffff;
  for (const byte of bytes) crc = table[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function makeCrcTable(): Uint32Array {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
}
