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
const HEX = Buffer.from('0123456789abcdef', 'latin1');
/** Where each of the 16 bytes' two digits go (the dashes skipped). */
const AT = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];

/**
 * A random (version 4) UUID, as `crypto.randomUUID()` makes, from the same
 * kind of batched CSPRNG bytes. Written as bytes and read back as one flat
 * string: `randomUUID()` joins 20 pieces into a string that V8 must then
 * flatten when the header is checked and written (~2k instructions a
 * request, issue 35).
 */
export function newRequestId(): string {
  if (next === random.length) {
    randomFillSync(random);
    next = 0;
  }
  const from = next;
  next += 16;
  for (let i = 0; i < 16; i++) {
    let byte = random[from + i] as number;
    if (i === 6)
      byte = (byte & 0x0f) | 0x40; // version 4
    else if (i === 8) byte = (byte & 0x3f) | 0x80; // variant 10
    const at = AT[i] as number;
    text[at] = HEX[byte >> 4] as number;
    text[at + 1] = HEX[byte & 0x0f] as number;
  }
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
