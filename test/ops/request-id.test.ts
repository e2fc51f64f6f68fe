/**
 * The request ids the gateway makes (`request-id.ts`): random version 4 UUIDs
 * from the CSPRNG, as `crypto.randomUUID()` makes them — lower-case hex, the
 * version and variant bits set, never repeated, every hex digit of the
 * random part in use — across many refills of the random batch. A client's
 * sane id is kept, any other replaced.
 */
import { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { newRequestId, takeRequestId } from '../../src/http/request-id.js';

const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function request(id?: string): IncomingMessage {
  const req = new IncomingMessage({} as Socket);
  req.headers = id === undefined ? {} : { 'x-request-id': id };
  return req;
}

describe('request ids', () => {
  it('are version 4 UUIDs, all different, over many refills of the random batch', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      const id = newRequestId();
      expect(id).toMatch(V4);
      seen.add(id);
    }
    expect(seen.size).toBe(20_000);
  });

  it('use every hex digit in every random position (not a counter, not a constant)', () => {
    const digits = Array.from({ length: 36 }, () => new Set<string>());
    for (let i = 0; i < 4_000; i++) {
      const id = newRequestId();
      for (let at = 0; at < 36; at++) digits[at]!.add(id[at]!);
    }
    for (let at = 0; at < 36; at++) {
      if ([8, 13, 18, 23].includes(at)) expect([...digits[at]!]).toEqual(['-']);
      else if (at === 14) expect([...digits[at]!]).toEqual(['4']);
      else if (at === 19) expect([...digits[at]!].sort()).toEqual(['8', '9', 'a', 'b']);
      else expect(digits[at]!.size).toBe(16);
    }
  });

  it('are independent strings: an id does not change when the next is made', () => {
    const first = newRequestId();
    const copy = `${first}`;
    for (let i = 0; i < 600; i++) newRequestId();
    expect(first).toBe(copy);
  });

  it('keep a client’s sane id and replace any other', () => {
    expect(takeRequestId(request('abc-123._:X'))).toBe('abc-123._:X');
    expect(takeRequestId(request())).toMatch(V4);
    expect(takeRequestId(request('has space'))).toMatch(V4);
    expect(takeRequestId(request('x'.repeat(129)))).toMatch(V4);
    expect(takeRequestId(request('{"inject":1}'))).toMatch(V4);
  });
});
