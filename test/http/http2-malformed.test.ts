/**
 * HTTP/2 requests that RFC 9113 §8.1.1 and §8.2 call malformed, from a raw
 * client: each stream is refused (RST_STREAM PROTOCOL_ERROR) before any
 * route sees it, the upstream never parses a request it did not accept
 * whole (no H2.CL / H2.TE smuggling), and the connection keeps serving.
 * What HTTP/1.1 cannot carry (a method its parser does not know, `post` for
 * `POST`; raw bytes outside ASCII in the target) HTTP/2 may not either.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useEchoFixture } from '../support/echo-fixture.js';
import { ALICE, tokenFor } from '../support/identity-fixture.js';
import { startRawUpstream, type RawUpstream } from '../support/raw-upstream.js';
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

/** An upstream that records the bytes it is sent: whatever a Node upstream's parser would refuse too. */
let wire: RawUpstream;
beforeAll(async () => {
  wire = await startRawUpstream(() => 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
});
afterAll(() => wire?.close());

const started = useEchoFixture((upstream) => ({
  listen: { http2: true },
  routes: [
    { prefix: '/open', upstream, auth: 'none' },
    // Scopes per method, no `*`: a method under no key needs none.
    {
      prefix: '/wire',
      upstream: wire.url,
      scopes: { GET: ['orders:read'], POST: ['orders:write'], DELETE: ['orders:write'] },
    },
  ],
  authorization: { roles: { admin: ['orders:read'], member: ['orders:read'] } },
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
        const answer = await send(raw, 1, fields, body).catch(() => undefined);
        if (answer === undefined) {
          // nghttp2 1.70 (Node 24) ends the whole connection (GOAWAY) for DATA past content-length.
          expect(raw.goawayCode()).toBeGreaterThan(ERROR.NO_ERROR);
          await new Promise((resolve) => setTimeout(resolve, 100));
          expect(wholeRequests()).toBe(before);
          return;
        }
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

  /** The JSON error answering `stream` (its HEADERS came first). */
  async function errorOn(raw: RawHttp2, stream: number): Promise<string> {
    const body = await raw.waitFor((f) => f.stream === stream && f.type === FRAME.DATA);
    return (JSON.parse(body.payload.toString()) as { error: string }).error;
  }

  it('refuses a method HTTP/1.1 cannot carry (post for POST, FOO): scopes per method are never skipped, the upstream hears nothing', async () => {
    const { access_token } = await tokenFor(started.fx.gw.url, ALICE, 'acme');
    const auth: [string, string][] = [['authorization', `Bearer ${access_token}`]];
    const raw = await connectRawHttp2(portOf(started.fx.gw.url));
    try {
      const before = wire.received.length;
      let stream = 1;
      // A case-insensitive upstream (Django, Flask) reads `post` as POST, which needs orders:write.
      for (const method of ['post', 'Post', 'delete', 'get', 'FOO']) {
        const answer = await send(raw, stream, requestFields(authority(), '/wire/x', auth, method));
        expect(answer.type).toBe(FRAME.HEADERS);
        expect(await errorOn(raw, stream)).toBe('invalid_request');
        stream += 2;
      }
      await send(raw, stream, requestFields(authority(), '/wire/x', auth, 'POST'));
      expect(await errorOn(raw, stream)).toBe('insufficient_scope');
      expect(wire.received.slice(before)).toEqual([]);
      const get = await send(raw, stream + 2, requestFields(authority(), '/wire/x', auth));
      expect(get.type).toBe(FRAME.HEADERS);
      await raw.waitFor((f) => f.stream === stream + 2 && (f.flags & FLAG.END_STREAM) !== 0);
      expect(wire.received.slice(before).map((r) => r.split('\r\n')[0])).toEqual([
        'GET /wire/x HTTP/1.1',
      ]);
    } finally {
      raw.close();
    }
  });

  it('refuses a :path with raw bytes outside ASCII (HTTP/1.1 cannot carry them); percent-encoded, they pass', async () => {
    const { access_token } = await tokenFor(started.fx.gw.url, ALICE, 'acme');
    const auth: [string, string][] = [['authorization', `Bearer ${access_token}`]];
    const raw = await connectRawHttp2(portOf(started.fx.gw.url));
    try {
      const before = wire.received.length;
      // "café" as UTF-8 bytes, and an overlong "/" (C0 AF) that old decoders read as a slash.
      const paths = ['/wire/caf\xc3\xa9', '/wire/acme/\xc0\xae\xc0\xae/globex'];
      for (const [i, path] of paths.entries()) {
        await send(raw, 1 + 2 * i, requestFields(authority(), path, auth));
        expect(await errorOn(raw, 1 + 2 * i)).toBe('invalid_request');
      }
      expect(wire.received.slice(before)).toEqual([]);
      await send(raw, 5, requestFields(authority(), '/wire/caf%C3%A9', auth));
      await raw.waitFor((f) => f.stream === 5 && (f.flags & FLAG.END_STREAM) !== 0);
      expect(wire.received.slice(before).map((r) => r.split('\r\n')[0])).toEqual([
        'GET /wire/caf%C3%A9 HTTP/1.1',
      ]);
    } finally {
      raw.close();
    }
  });

  it('answers CONNECT (no tunnels, no RFC 8441 WebSockets) 501 not_implemented', async () => {
    const raw = await connectRawHttp2(portOf(started.fx.gw.url));
    try {
      const before = started.upstream.requests.length;
      raw.headers(1, [
        [':method', 'CONNECT'],
        [':authority', 'internal.example:443'],
      ]);
      const body = await raw.waitFor((f) => f.stream === 1 && f.type === FRAME.DATA);
      expect(JSON.parse(body.payload.toString()).error).toBe('not_implemented');
      expect(started.upstream.requests.length).toBe(before);
    } finally {
      raw.close();
    }
  });

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
