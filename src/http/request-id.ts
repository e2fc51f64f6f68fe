/** `X-Request-Id`: passed through when the client's is sane, generated otherwise. */
import { Buffer } from 'node:buffer';
import { randomFillSync } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export const REQUEST_ID_HEADER = 'x-request-id';

const SANE = /^[A-Za-z0-9._:-]{1,128}$/;

export function takeRequestId(req: IncomingMessage): string {
  const given = req.headers[REQUEST_ID_HEADER];
  return typeof given === 'string' && SANE.test(given) ? given : newRequestId();
}

/** Random bytes for this many ids at a time: one call to the CSPRNG per 256 ids. */
const IDS_PER_FILL = 256;
const random = Buffer.allocUnsafeSlow(16 * IDS_PER_FILL);
let next = random.length;
/** The id's characters, the dashes in place: each id overwrites the 32 hex digits. */
const text = Buffer.from('00000000-0000-4000-8000-000000000000', 'latin1');
const digits = new DataView(text.buffer, text.byteOffset, text.length);
/** A byte's two hex digits as one little-endian 16-bit write: the high digit first. */
const HEX_PAIR = new Uint16Array(256);
for (let byte = 0; byte < 256; byte++) {
  const hex = byte.toString(16).padStart(2, '0');
  HEX_PAIR[byte] = hex.charCodeAt(0) | (hex.charCodeAt(1) << 8);
}

/**
 * A random (version 4) UUID, as `crypto.randomUUID()` makes, from the same
 * kind of batched CSPRNG bytes. Written as bytes (two digits a write) and
 * read back as one flat string: `randomUUID()` joins 20 pieces into a string
 * that V8 must then flatten when the header is checked and written (~2k
 * instructions a request, issue 35).
 */
export function newRequestId(): string {
  if (next === random.length) {
    randomFillSync(random);
    next = 0;
  }
  const r = random;
  const f = next;
  next += 16;
  const pair = (byte: number | undefined): number => HEX_PAIR[byte as number] as number;
  digits.setUint16(0, pair(r[f]), true);
  digits.setUint16(2, pair(r[f + 1]), true);
  digits.setUint16(4, pair(r[f + 2]), true);
  digits.setUint16(6, pair(r[f + 3]), true);
  digits.setUint16(9, pair(r[f + 4]), true);
  digits.setUint16(11, pair(r[f + 5]), true);
  digits.setUint16(14, pair(((r[f + 6] as number) & 0x0f) | 0x40), true); // version 4
  digits.setUint16(16, pair(r[f + 7]), true);
  digits.setUint16(19, pair(((r[f + 8] as number) & 0x3f) | 0x80), true); // variant 10
  digits.setUint16(21, pair(r[f + 9]), true);
  for (let i = 10, at = 24; i < 16; i++, at += 2) digits.setUint16(at, pair(r[f + i]), true);
  return readText(text);
}

/**
 * The id's 36 bytes as a string: `latin1Slice`, the method `toString('latin1')`
 * ends in, without its argument handling (half the cost); it is in every Node
 * this runs on, `toString` otherwise.
 */
const readText: (bytes: Buffer) => string =
  typeof (Buffer.prototype as Partial<Latin1Slicing>).latin1Slice === 'function'
    ? (bytes) => (bytes as unknown as Latin1Slicing).latin1Slice(0, 36)
    : (bytes) => bytes.toString('latin1', 0, 36);

interface Latin1Slicing {
  latin1Slice(start: number, end: number): string;
}
