/**
 * A public corpus of HTTP/1.x framing cases (aws/http-desync-guardian, transcribed in
 * `test/support/desync-guardian-corpus.ts`) sent through a real gateway, each on its own
 * connection, in front of a raw TCP upstream that records the bytes it receives.
 *
 * Each case gets exactly its verdict: forwarded, or refused with its status and CODE and
 * nothing reaching the upstream. A forwarded request carries one framing, the gateway's own
 * (`Content-Length` or `Transfer-Encoding: chunked`, spelled so), and no header that a
 * normaliser could read as a framing or identity header (`Transfer---Encoding`,
 * `X__User__Id`). Every case the corpus calls `Severe` is refused. A case whose verdict departs
 * from its tier has its row, with the reason, in docs/security.md.
 */
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer } from '../support/gateway.js';
import { CORPUS, FORWARDED, type CorpusCase } from '../support/desync-guardian-corpus.js';
import type { IdentityFixture } from '../support/identity-fixture.js';
import { startRawUpstream, type RawUpstream } from '../support/raw-upstream.js';
import { startSignedInFixture, type SignedIn } from '../support/signed-in-fixture.js';

let upstream: RawUpstream;
let fx: IdentityFixture;
let port: number;
let auth: string;

beforeAll(async () => {
  upstream = await startRawUpstream(() => 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
  let alice: SignedIn;
  ({ fx, alice } = await startSignedInFixture({
    routes: [{ prefix: '/', upstream: upstream.url }],
  }));
  port = Number(new URL(fx.gw.url).port);
  auth = bearer(alice.access_token);
});

afterAll(async () => {
  await fx?.close();
  await upstream?.close();
});

/** A string as the corpus means it: bytes up to \xff as they are, anything above as UTF-8. */
const bytes = (text: string) =>
  Buffer.from(text, [...text].every((c) => c.charCodeAt(0) <= 0xff) ? 'latin1' : 'utf8');

/** The body a sender framing the request this way means: none unless a framing header names one. */
function bodyOf(headers: [string, string][]): string {
  const framing = (name: string) => headers.find(([n]) => n.toLowerCase() === name)?.[1];
  if (framing('transfer-encoding') !== undefined) return '5\r\nhello\r\n0\r\n\r\n';
  const length = framing('content-length');
  return length !== undefined && /^\s*\d{1,7}\s*$/.test(length) ? 'x'.repeat(Number(length)) : '';
}

/** The case's request, as a client would send it to the gateway: with a Host and a token. */
function requestOf(c: CorpusCase): Buffer {
  const [method, target, version] = c.line;
  const lines = [
    version === '' ? `${method} ${target}` : `${method} ${target} ${version}`,
    'Host: gw.example',
    `Authorization: ${auth}`,
    // A value that starts with whitespace is sent as the corpus wrote it.
    ...c.headers.map(([name, value]) => `${name}:${/^[ \t]/.test(value) ? '' : ' '}${value}`),
    'Connection: close',
  ];
  return Buffer.concat([
    ...lines.map((l) => bytes(`${l}\r\n`)),
    bytes('\r\n'),
    bytes(bodyOf(c.headers)),
  ]);
}

/** Sends `request` on a fresh connection; the status and error CODE of the answer, read until the gateway closes. */
function exchange(request: Buffer): Promise<{ status: number; code?: string; raw: string }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let raw = '';
    socket.setTimeout(5000, () => socket.destroy());
    socket.on('data', (chunk: Buffer) => (raw += chunk.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(raw)?.[1] ?? 0);
      const code = /"error":"([a-z_]+)"/.exec(raw)?.[1];
      resolve({ status, code, raw });
    });
    socket.write(request);
  });
}

/** Header names of a forwarded request's head, and its body. */
function split(request: string): { names: string[]; framing: string[]; body: string } {
  const end = request.indexOf('\r\n\r\n');
  const lines = request.slice(0, end).split('\r\n').slice(1);
  const names = lines.map((l) => l.slice(0, l.indexOf(':')));
  const framing = lines.filter((l) => /^(content-length|transfer-encoding):/i.test(l));
  return { names, framing, body: request.slice(end + 4) };
}

/** A name as a normaliser that folds case and collapses `-`/`_` runs reads it (written apart from the gateway's). */
const normalised = (name: string) => name.toLowerCase().replace(/[-_]+/g, '-');
/** Names the gateway sets itself: forwarded only in its own spelling. */
const ASSERTED = [
  'content-length',
  'transfer-encoding',
  'x-user-id',
  'x-user-email',
  'x-tenant-id',
  'x-tenant-type',
];

const numbered = CORPUS.map((c, i) => ({ ...c, title: `${c.source} #${i + 1}: ${c.name}` }));

describe.each(['Compliant', 'Acceptable', 'Ambiguous', 'Severe'])('%s cases', (tier) => {
  it.each(numbered.filter((c) => c.tier === tier).map((c) => [c.title, c] as const))(
    '%s',
    async (_title, c) => {
      const before = upstream.received.length;
      const answer = await exchange(requestOf(c));
      const forwarded = upstream.received.slice(before);
      if (c.verdict !== FORWARDED) {
        expect({ status: answer.status, code: answer.code }).toEqual({
          status: c.verdict[0],
          code: c.verdict[1],
        });
        expect(forwarded).toEqual([]);
        return;
      }
      expect(answer.status).toBe(200);
      expect(forwarded).toHaveLength(1);
      const { names, framing, body } = split(forwarded[0] as string);
      for (const name of names) {
        if (ASSERTED.includes(normalised(name))) expect(name).toBe(normalised(name));
      }
      // One framing, the gateway's, and the body the client framed (re-framed when chunked).
      const sent = bodyOf(c.headers);
      if (sent.startsWith('5\r\n')) {
        expect(framing).toEqual(['transfer-encoding: chunked']);
        expect(body).toBe(sent);
      } else if (sent !== '') {
        expect(framing).toEqual([`content-length: ${sent.length}`]);
        expect(body).toBe(sent);
      } else {
        expect(framing.filter((l) => l !== 'content-length: 0')).toEqual([]);
        expect(body).toBe('');
      }
    },
  );
});

/** Sends `text` on a fresh connection; everything back until the gateway closes it (5 s at most). */
function rawExchange(text: string): Promise<{ raw: string; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let raw = '';
    let closed = true;
    socket.setTimeout(5000, () => {
      closed = false;
      socket.destroy();
    });
    socket.on('data', (chunk: Buffer) => (raw += chunk.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () => resolve({ raw, closed }));
    socket.write(text, 'latin1');
  });
}

describe('a transfer coding the gateway does not implement', () => {
  const CODED = 'Transfer-Encoding: gzip, chunked\r\n';
  const BODY = '5\r\nhello\r\n0\r\n\r\n';
  it.each([
    [
      'a proxied request',
      `POST /orders/1 HTTP/1.1\r\nHost: gw\r\nAuthorization: AUTH\r\n${CODED}\r\n${BODY}`,
    ],
    [
      'a WebSocket upgrade',
      'GET /live HTTP/1.1\r\nHost: gw\r\nAuthorization: AUTH\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n' +
        `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n${CODED}\r\n${BODY}`,
    ],
    [
      'forward-auth',
      `POST /auth/verify HTTP/1.1\r\nHost: gw\r\nAuthorization: AUTH\r\nX-Original-URI: /orders/1\r\n${CODED}\r\n${BODY}`,
    ],
    [
      'the identity API',
      `POST /1/users HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\n${CODED}\r\n${BODY}`,
    ],
  ])(
    'is 501 not_implemented on %s, the connection closed, nothing forwarded',
    async (_way, text) => {
      const before = upstream.received.length;
      // A request pipelined behind it: never answered, never forwarded.
      const pipelined = `GET /orders/2 HTTP/1.1\r\nHost: gw\r\nAuthorization: ${auth}\r\n\r\n`;
      const { raw, closed } = await rawExchange(text.replace('AUTH', auth) + pipelined);
      expect(raw.startsWith('HTTP/1.1 501 ')).toBe(true);
      expect(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)).error).toBe('not_implemented');
      expect(raw.match(/HTTP\/1\.1 /g)).toHaveLength(1);
      expect(closed).toBe(true);
      expect(upstream.received.slice(before)).toEqual([]);
    },
  );
});

describe('Transfer-Encoding below HTTP/1.1 (RFC 9112 §6.1)', () => {
  it.each(['HTTP/1.0', 'HTTP/0.9'])(
    '%s: forwarded re-framed, then the connection is closed, even when asked to stay open',
    async (version) => {
      const before = upstream.received.length;
      const first =
        `POST /orders/1 ${version}\r\nHost: gw\r\nAuthorization: ${auth}\r\nConnection: keep-alive\r\n` +
        'Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n';
      const pipelined = `GET /orders/2 HTTP/1.1\r\nHost: gw\r\nAuthorization: ${auth}\r\n\r\n`;
      const { raw, closed } = await rawExchange(first + pipelined);
      expect(raw.match(/HTTP\/1\.1 \d{3} /g)).toEqual(['HTTP/1.1 200 ']);
      expect(closed).toBe(true);
      const forwarded = upstream.received.slice(before);
      expect(forwarded).toHaveLength(1);
      expect(split(forwarded[0] as string).framing).toEqual(['transfer-encoding: chunked']);
    },
  );
});

describe('the verdicts', () => {
  it('refuse with 400 invalid_request, or 501 not_implemented for a transfer coding', () => {
    const refusals = CORPUS.flatMap((c) => (c.verdict === FORWARDED ? [] : [c.verdict]));
    const codeOf = { 400: 'invalid_request', 501: 'not_implemented' } as Record<number, string>;
    expect(refusals.filter(([status, code]) => codeOf[status] !== code)).toEqual([]);
    expect(new Set(refusals.map(([, code]) => code))).toEqual(
      new Set(['invalid_request', 'not_implemented']),
    );
    const codings = CORPUS.filter(
      (c) => c.verdict !== FORWARDED && c.verdict[1] === 'not_implemented',
    );
    expect(
      codings.every((c) => c.headers.some(([name]) => /^transfer-encoding$/i.test(name))),
    ).toBe(true);
  });

  it('refuse every case the corpus calls Severe', () => {
    const severe = CORPUS.filter((c) => c.tier === 'Severe');
    expect(severe.length).toBeGreaterThan(40);
    expect(severe.filter((c) => c.verdict === FORWARDED).map((c) => c.name)).toEqual([]);
  });

  it('that depart from the corpus are each explained in docs/security.md', () => {
    const page = readFileSync(new URL('../../docs/security.md', import.meta.url), 'utf8');
    const table =
      page.split(/^### Framing cases of a public corpus\s*$/m)[1]?.split(/^##/m)[0] ?? '';
    const departing = CORPUS.filter((c) =>
      c.verdict === FORWARDED
        ? c.tier === 'Ambiguous'
        : c.tier === 'Compliant' || c.tier === 'Acceptable',
    );
    expect(departing.length).toBeGreaterThan(0);
    const missing = departing.filter((c) => !table.includes(`${c.source}: ${c.name}`));
    expect(missing.map((c) => `${c.source}: ${c.name}`)).toEqual([]);
  });
});
