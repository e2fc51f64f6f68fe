/**
 * HTTP/2 requests that RFC 9113 §8.1.1 and §8.2 call malformed, from a raw
 * client: each stream is refused (RST_STREAM PROTOCOL_ERROR) before any
 * route sees it, the upstream never parses a request it did not accept
 * whole (no H2.CL / H2.TE smuggling), and the connection keeps serving.
 */
import { describe, expect, it } from 'vitest';
import { useEchoFixture } from '../support/echo-fixture.js';
import {
  answerTo,
  connectRawHttp2,
  ERROR,
  FLAG,
  FRAME,
  frame,
  requestFields,
  rstCode,
  type RawHttp2,
} from '../support/raw-http2.js';

const started = useEchoFixture((upstream) => ({
  listen: { http2: true },
  routes: [{ prefix: '/open', upstream, auth: 'none' }],
}));

function portOf(url: string): number {
  return Number(new URL(url).port);
}

/** Sends `fields` (and `body`) on `stream`; resolves with the frame that ends it. */
async function send(raw: RawHttp2, stream: number, fields: [string, string][], body?: Buffer) {
  raw.headers(stream, fields, body === undefined);
  if (body !== undefined) raw.write(frame(FRAME.DATA, FLAG.END_STREAM, stream, body));
  return raw.waitFor(answerTo(stream));
}

/** The upstream's requests that arrived whole. */
function wholeRequests(): number {
  return started.upstream.requests.filter((r) => r.complete).length;
}

describe('malformed HTTP/2 requests', () => {
  const authority = () => new URL(started.fx.gw.url).host;

  const malformed: [string, [string, string][], Buffer?][] = [
    ['a content-length above the DATA', [['content-length', '10']], Buffer.from('12345')],
    ['a content-length below the DATA', [['content-length', '3']], Buffer.from('1234567890')],
    [
      'transfer-encoding: chunked',
      [['transfer-encoding', 'chunked']],
      Buffer.from('5\r\nhello\r\n0\r\n\r\n'),
    ],
    ['connection: keep-alive', [['connection', 'keep-alive']]],
    ['keep-alive', [['keep-alive', 'timeout=5']]],
    ['proxy-connection', [['proxy-connection', 'keep-alive']]],
    ['upgrade: websocket', [['upgrade', 'websocket']]],
    ['te: gzip', [['te', 'gzip']]],
    ['an upper-case name', [['X-Tenant-Id', 'acme']]],
  ];

  for (const [what, extra, body] of malformed) {
    it(`refuses a stream with ${what}, and the upstream parses nothing of it`, async () => {
      const raw = await connectRawHttp2(portOf(started.fx.gw.url));
      try {
        const before = wholeRequests();
        const fields = requestFields(
          authority(),
          '/open/x',
          extra,
          body === undefined ? 'GET' : 'POST',
        );
        const answer = await send(raw, 1, fields, body);
        expect(answer.type).toBe(FRAME.RST_STREAM);
        expect(rstCode(answer)).toBe(ERROR.PROTOCOL_ERROR);
        // The connection still serves a well-formed request.
        const next = await send(raw, 3, requestFields(authority(), '/open/ok'));
        expect(next.type).toBe(FRAME.HEADERS);
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect(wholeRequests()).toBe(before + 1);
      } finally {
        raw.close();
      }
    });
  }

  for (const value of ['one\r\nx-injected: acme', 'one\nx-injected: two', 'one\0two']) {
    it(`drops a field whose value has CR, LF or NUL (${JSON.stringify(value)}): nothing of it reaches the upstream`, async () => {
      const raw = await connectRawHttp2(portOf(started.fx.gw.url));
      try {
        const fields = requestFields(authority(), '/open/crlf', [
          ['x-a', value],
          ['x-kept', 'yes'],
        ]);
        const answer = await send(raw, 1, fields);
        expect(answer.type).toBe(FRAME.HEADERS);
        await raw.waitFor((f) => f.stream === 1 && (f.flags & FLAG.END_STREAM) !== 0);
        const seen = started.upstream.requests.at(-1);
        expect(seen?.url).toBe('/open/crlf');
        expect(seen?.headers['x-kept']).toBe('yes');
        expect(seen?.headers['x-a']).toBeUndefined();
        expect(seen?.headers['x-injected']).toBeUndefined();
      } finally {
        raw.close();
      }
    });
  }

  it('refuses a pseudo-header field after a regular one, and one sent twice', async () => {
    const raw = await connectRawHttp2(portOf(started.fx.gw.url));
    try {
      const [method, scheme, auth, path] = requestFields(authority(), '/open/x');
      const after = await send(raw, 1, [method!, scheme!, auth!, ['x-a', '1'], path!]);
      expect(after.type).toBe(FRAME.RST_STREAM);
      expect(rstCode(after)).toBe(ERROR.PROTOCOL_ERROR);
      const twice = await send(raw, 3, [method!, scheme!, auth!, path!, [':path', '/open/y']]);
      expect(twice.type).toBe(FRAME.RST_STREAM);
      expect(rstCode(twice)).toBe(ERROR.PROTOCOL_ERROR);
    } finally {
      raw.close();
    }
  });
});
