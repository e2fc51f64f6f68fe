/**
 * DESIGN §2 step 4, read on the wire: a raw TCP upstream records the bytes
 * the gateway sends and answers with bytes of its own, so framing and header
 * bytes are checked as they travel, not as a parser reports them. Covers what
 * the forwarding core decides itself: request framing (known length →
 * `Content-Length`, unknown → chunked, no body → neither), response headers
 * relayed byte for byte but for hop-by-hop ones, interim 1xx answers, and an
 * upstream's non-101 answer to a WebSocket upgrade relayed to the client.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer } from '../support/gateway.js';
import type { IdentityFixture } from '../support/identity-fixture.js';
import { startRawUpstream, type RawUpstream } from '../support/raw-upstream.js';
import { startSignedInFixture, type SignedIn } from '../support/signed-in-fixture.js';

/** What the raw upstream answers, by the request path's last segment. */
const ANSWERS: Record<string, string> = {
  plain: 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok',
  bytes:
    'HTTP/1.1 200 OK\r\ncontent-length: 2\r\nx-name: caf\xe9\r\n' +
    'connection: keep-alive, x-hop\r\nx-hop: secret\r\nkeep-alive: timeout=17\r\n' +
    'set-cookie: a=1\r\nset-cookie: b=2\r\n\r\nok',
  early:
    'HTTP/1.1 103 Early Hints\r\nlink: </a.css>\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok',
  head: 'HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 42\r\n\r\n',
  nocontent: 'HTTP/1.1 204 No Content\r\nx-done: yes\r\n\r\n',
  notmodified: 'HTTP/1.1 304 Not Modified\r\netag: "v1"\r\n\r\n',
  refuse:
    'HTTP/1.1 403 Forbidden\r\ncontent-type: application/json\r\ncontent-length: 15\r\n\r\n{"denied":true}',
};

let upstream: RawUpstream;
let fx: IdentityFixture;
let port: number;
let auth: string;

beforeAll(async () => {
  upstream = await startRawUpstream(
    (request) => ANSWERS[/^\S+ \S*\/([a-z]+)/.exec(request)?.[1] ?? 'plain'] ?? ANSWERS.plain!,
  );
  let alice: SignedIn;
  ({ fx, alice } = await startSignedInFixture({
    routes: [{ prefix: '/wire', upstream: upstream.url }],
  }));
  port = Number(new URL(fx.gw.url).port);
  auth = bearer(alice.access_token);
});

afterAll(async () => {
  await fx?.close();
  await upstream?.close();
});

/** Sends `head` (+ `body`) on a fresh connection; resolves with every byte back until `until` is seen. */
function exchange(head: string, body: string, until: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let got = '';
    socket.on('data', (chunk: Buffer) => {
      got += chunk.toString('latin1');
      if (until.test(got)) {
        socket.destroy();
        resolve(got);
      }
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(got));
    socket.write(`${head}\r\nauthorization: ${auth}\r\n\r\n${body}`, 'latin1');
  });
}

/** The last request the upstream received, split into its head's lines and its body. */
function lastReceived(): { lines: string[]; body: string } {
  const request = upstream.received.at(-1) ?? '';
  const end = request.indexOf('\r\n\r\n');
  return { lines: request.slice(0, end).split('\r\n'), body: request.slice(end + 4) };
}

/** The data of a chunked body (RFC 9112 §7.1), without extensions or trailers. */
function dechunk(body: string): string {
  let data = '';
  let at = 0;
  for (;;) {
    const eol = body.indexOf('\r\n', at);
    const size = parseInt(body.slice(at, eol), 16);
    if (size === 0) return data;
    data += body.slice(eol + 2, eol + 2 + size);
    at = eol + 2 + size + 2;
  }
}

const framing = (lines: string[]) =>
  lines.filter((l) => /^(content-length|transfer-encoding):/i.test(l)).map((l) => l.toLowerCase());

describe('request framing, as the upstream reads it', () => {
  it('a GET without a body carries neither Content-Length nor Transfer-Encoding', async () => {
    await exchange('GET /wire/plain HTTP/1.1\r\nhost: gw', '', /\r\n\r\nok$/);
    expect(framing(lastReceived().lines)).toEqual([]);
  });

  it('a GET announcing Content-Length: 0 carries neither', async () => {
    await exchange('GET /wire/plain HTTP/1.1\r\nhost: gw\r\ncontent-length: 0', '', /ok$/);
    expect(framing(lastReceived().lines)).toEqual([]);
  });

  it('a known length is sent as Content-Length, the body byte for byte', async () => {
    await exchange('POST /wire/plain HTTP/1.1\r\nhost: gw\r\ncontent-length: 5', 'hello', /ok$/);
    const { lines, body } = lastReceived();
    expect(framing(lines)).toEqual(['content-length: 5']);
    expect(body).toBe('hello');
  });

  it('a chunked body arrives framed once, by one header, with every byte', async () => {
    await exchange(
      'POST /wire/plain HTTP/1.1\r\nhost: gw\r\ntransfer-encoding: chunked',
      '5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n',
      /ok$/,
    );
    const { lines, body } = lastReceived();
    const headers = framing(lines);
    expect(headers).toHaveLength(1);
    if (headers[0] === 'transfer-encoding: chunked') expect(dechunk(body)).toBe('hello world');
    else {
      // The whole body had arrived when the gateway forwarded it: its length was known.
      expect(headers).toEqual(['content-length: 11']);
      expect(body).toBe('hello world');
    }
  });
});

describe('response heads', () => {
  it('relay header bytes as sent, every Set-Cookie, and no hop-by-hop header of the upstream', async () => {
    const got = await exchange('GET /wire/bytes HTTP/1.1\r\nhost: gw', '', /\r\n\r\nok$/);
    const head = got.slice(0, got.indexOf('\r\n\r\n')).split('\r\n');
    expect(head[0]).toBe('HTTP/1.1 200 OK');
    expect(head).toContain('x-name: caf\xe9');
    expect(head.filter((l) => l.toLowerCase().startsWith('set-cookie:'))).toEqual([
      'set-cookie: a=1',
      'set-cookie: b=2',
    ]);
    expect(head.some((l) => /^x-hop:/i.test(l))).toBe(false);
    expect(head.some((l) => /^keep-alive: timeout=17$/i.test(l))).toBe(false);
  });

  it('an interim 103 is not mistaken for the answer: the 200 after it reaches the client', async () => {
    const got = await exchange('GET /wire/early HTTP/1.1\r\nhost: gw', '', /\r\n\r\nok$/);
    expect(got.startsWith('HTTP/1.1 200 OK\r\n')).toBe(true);
  });
});

/**
 * Sends `first`, waits for its whole answer (`firstEnd`), then a GET of
 * /wire/plain on the same connection: a body where none belongs would be
 * read as the second answer's start.
 */
function thenPlain(first: string, firstEnd: RegExp): Promise<[string, string]> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let got = '';
    let answer: string | undefined;
    socket.on('data', (chunk: Buffer) => {
      got += chunk.toString('latin1');
      if (answer === undefined && firstEnd.test(got)) {
        answer = got;
        got = '';
        socket.write(`GET /wire/plain HTTP/1.1\r\nhost: gw\r\nauthorization: ${auth}\r\n\r\n`);
      } else if (answer !== undefined && /\r\n\r\nok$/.test(got)) {
        socket.destroy();
        resolve([answer, got]);
      }
    });
    socket.on('error', reject);
    socket.write(`${first}\r\nauthorization: ${auth}\r\n\r\n`);
  });
}

describe('answers without a body', () => {
  it("HEAD: the upstream's Content-Length, no body, and the connection serves on", async () => {
    const [head, next] = await thenPlain('HEAD /wire/head HTTP/1.1\r\nhost: gw', /\r\n\r\n$/);
    expect(head.startsWith('HTTP/1.1 200 OK\r\n')).toBe(true);
    expect(head).toMatch(/\r\ncontent-length: 42\r\n/i);
    expect(head.endsWith('\r\n\r\n')).toBe(true);
    expect(next.startsWith('HTTP/1.1 200 OK\r\n')).toBe(true);
  });

  it.each([
    ['nocontent', 'HTTP/1.1 204 No Content\r\n', /\r\nx-done: yes\r\n/],
    ['notmodified', 'HTTP/1.1 304 Not Modified\r\n', /\r\netag: "v1"\r\n/],
  ])('%s: relayed without a body, and the connection serves on', async (name, line, header) => {
    const [answer, next] = await thenPlain(`GET /wire/${name} HTTP/1.1\r\nhost: gw`, /\r\n\r\n$/);
    expect(answer.startsWith(line)).toBe(true);
    expect(answer).toMatch(header);
    expect(answer).not.toMatch(/\r\n(content-length|transfer-encoding):/i);
    expect(next.startsWith('HTTP/1.1 200 OK\r\n')).toBe(true);
  });
});

describe('a WebSocket upgrade the upstream refuses', () => {
  it("reaches the client as the upstream's answer, status and body, then the socket closes", async () => {
    const got = await exchange(
      'GET /wire/refuse HTTP/1.1\r\nhost: gw\r\nconnection: Upgrade\r\nupgrade: websocket\r\n' +
        'sec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==',
      '',
      /$^/, // read until the gateway closes the socket
    );
    expect(got.startsWith('HTTP/1.1 403 Forbidden\r\n')).toBe(true);
    expect(got.endsWith('{"denied":true}')).toBe(true);
    const { lines } = lastReceived();
    expect(lines).toContain('upgrade: websocket');
    expect(lines.filter((l) => /^connection:/i.test(l))).toEqual(['connection: upgrade']);
  });
});
