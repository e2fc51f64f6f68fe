/**
 * Issue 43, item 4: one verdict per spelling of a credential, whichever way it
 * comes in — a proxied request to a protected route and to a public one (the
 * pipeline's anonymous check), a WebSocket upgrade, forward-auth's
 * `/auth/verify` and an api Bearer endpoint (`GET /1/tenants/current`). Each
 * spelling of `Authorization` is written byte for byte on a raw socket
 * (latin1: U+00A0 is the one byte A0), with a real token of Alice's for acme.
 *
 * An answer is read back as the verdict it shows: admitted for acme (the
 * identity the upstream, forward-auth or the api got), no credential of the
 * gateway's (refused with the realm alone on a protected way, admitted
 * anonymously on the public route), or a bearer credential refused (401 with
 * `error="invalid_token"`, on the public route too). Before issue 43, U+00A0
 * after `Bearer` was a bearer to the anonymous check and no bearer to the
 * token parser: refused on the public route while told it sent no credential.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic } from '../support/gateway.js';
import {
  ALICE,
  startMemoryIdentityFixture,
  tokenFor,
  type IdentityFixture,
} from '../support/identity-fixture.js';
import { makeApiKey, makeClient } from '../support/machine-client.js';
import {
  startEchoUpstream,
  startWebSocketUpstream,
  type CountingUpstream,
  type WebSocketUpstream,
} from '../support/upstream.js';

let echo: CountingUpstream;
let sockets: WebSocketUpstream;
let fx: IdentityFixture;
let token: string;
/** A session of Alice's for acme: its cookie's value. */
let session: string;

beforeAll(async () => {
  echo = await startEchoUpstream();
  sockets = await startWebSocketUpstream();
  fx = await startMemoryIdentityFixture({
    routes: [
      { prefix: '/orders', upstream: echo.url },
      { prefix: '/public', upstream: echo.url, auth: 'none' },
      { prefix: '/ws', upstream: sockets.url },
      { prefix: '/app', upstream: echo.url, auth: 'session' },
      { prefix: '/live', upstream: sockets.url, auth: 'session' },
    ],
    apiKeys: { enabled: true },
    sessions: { enabled: true },
  });
  token = (await tokenFor(fx.gw.url, ALICE, 'acme')).access_token;
  const alice = await fx.gw.gateway.store.users.findUserByEmail(ALICE.email);
  session = (
    await fx.gw.gateway.browserSessions.start({
      userId: alice?.id as string,
      tenantId: 'acme',
      userAgent: 'vitest',
      ip: '127.0.0.1',
    })
  ).cookieValue;
});

afterAll(async () => {
  await fx?.close();
  await sockets?.close();
  await echo?.close();
});

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * One request on a connection of its own, its head written as latin1 bytes;
 * the answer read to the gateway's close (a 101: its head alone).
 */
function exchange(path: string, lines: readonly string[]): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(fx.gw.url).port), '127.0.0.1');
    let data = '';
    const done = () => {
      const [head = '', ...rest] = data.split('\r\n\r\n');
      const [statusLine = '', ...fields] = head.split('\r\n');
      const headers = Object.fromEntries(
        fields.map((f) => [
          f.slice(0, f.indexOf(':')).toLowerCase(),
          f.slice(f.indexOf(':') + 1).trim(),
        ]),
      );
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') });
    };
    socket.on('data', (chunk) => {
      data += chunk.toString('latin1');
      if (data.startsWith('HTTP/1.1 101') && data.includes('\r\n\r\n')) {
        socket.destroy();
        done();
      }
    });
    socket.on('close', done);
    socket.on('error', reject);
    socket.write(
      Buffer.from([`GET ${path} HTTP/1.1`, 'Host: gw', ...lines, '', ''].join('\r\n'), 'latin1'),
    );
  });
}

const ADMITTED = 'admitted for acme';
const NO_CREDENTIAL = "no credential of the gateway's";
const REFUSED = 'a bearer credential refused';

interface Way {
  name: string;
  send: (lines: string[]) => Promise<Answer>;
  /** The tenant the answer shows the request admitted for ('' anonymous), when admitted. */
  admittedFor: (answer: Answer) => string | undefined;
  public?: true;
}

/** A JSON field of a 200's body (which may come chunked), '' when it has none. */
const field = (name: string) => (answer: Answer) =>
  answer.status === 200
    ? (new RegExp(`"${name}":"([^"]*)"`).exec(answer.body)?.[1] ?? '')
    : undefined;
/** The identity the echo upstream received. */
const echoed = field('x-tenant-id');

const WAYS: Way[] = [
  {
    name: 'a proxied request',
    send: (l) => exchange('/orders/x', [...l, 'Connection: close']),
    admittedFor: echoed,
  },
  {
    name: 'a proxied request to a public route',
    send: (l) => exchange('/public/x', [...l, 'Connection: close']),
    admittedFor: echoed,
    public: true,
  },
  {
    name: 'a WebSocket upgrade',
    send: (l) =>
      exchange('/ws/x', [
        ...l,
        'Connection: Upgrade',
        'Upgrade: websocket',
        'Sec-WebSocket-Version: 13',
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
      ]),
    admittedFor: (answer) =>
      answer.status === 101 ? (sockets.upgrades.at(-1)?.['x-tenant-id'] as string) : undefined,
  },
  {
    name: 'forward-auth',
    send: (l) => exchange('/auth/verify', [...l, 'X-Original-URI: /orders/x', 'Connection: close']),
    admittedFor: (answer) => (answer.status === 200 ? answer.headers['x-tenant-id'] : undefined),
  },
  {
    name: 'an api Bearer endpoint',
    send: (l) => exchange('/1/tenants/current', [...l, 'Connection: close']),
    admittedFor: field('tenant_id'),
  },
];

/** The verdict an answer shows; anything else verbatim. */
function verdictOf(way: Way, answer: Answer): string {
  const tenant = way.admittedFor(answer);
  if (tenant === 'acme') return ADMITTED;
  if (tenant === '' && way.public) return NO_CREDENTIAL;
  const challenge = answer.headers['www-authenticate'];
  if (answer.status === 401 && answer.body.includes('"invalid_token"')) {
    if (challenge === 'Bearer error="invalid_token"') return REFUSED;
    if (challenge === 'Bearer realm="tenant-gateway"' && !way.public) return NO_CREDENTIAL;
  }
  return `${answer.status} ${challenge} ${answer.body}`;
}

/** Each spelling, with `T` for the token, and the one verdict it gets (docs/security.md). */
const SPELLINGS: [string, string | undefined, string][] = [
  ['exact', 'Bearer {t}', ADMITTED],
  ['lower case', 'bearer {t}', ADMITTED],
  ['upper case', 'BEARER {t}', ADMITTED],
  ['two spaces', 'Bearer  {t}', ADMITTED],
  ['a space before (not part of the value)', ' Bearer {t}', ADMITTED],
  ['a tab after the token (not part of the value)', 'Bearer {t}\t', ADMITTED],
  ['Bearer alone', 'Bearer', REFUSED],
  ['Bearer and a tab', 'Bearer\t', REFUSED],
  ['a tab after Bearer', 'Bearer\t{t}', REFUSED],
  ['U+00A0 after Bearer', 'Bearer\u00a0{t}', REFUSED],
  ['U+00A0 in UTF-8 after Bearer', 'Bearer\u00c2\u00a0{t}', REFUSED],
  ['U+00A0 before Bearer', '\u00a0Bearer {t}', REFUSED],
  ['the token twice', 'Bearer {t} {t}', REFUSED],
  ['a slash after Bearer', 'Bearer/{t}', REFUSED],
  ['no Authorization', undefined, NO_CREDENTIAL],
  ['Basic', basic(ALICE.email, ALICE.password), NO_CREDENTIAL],
  ['another scheme', 'Token {t}', NO_CREDENTIAL],
  ['a longer scheme', 'Bearerish {t}', NO_CREDENTIAL],
];

describe.each(SPELLINGS)('Authorization %s', (_name, spelling, expected) => {
  it(`is one verdict on every way: ${expected}`, async () => {
    const lines =
      spelling === undefined ? [] : [`Authorization: ${spelling.replaceAll('{t}', token)}`];
    const verdicts: Record<string, string> = {};
    for (const way of WAYS) verdicts[way.name] = verdictOf(way, await way.send(lines));
    expect(verdicts).toEqual(Object.fromEntries(WAYS.map((way) => [way.name, expected])));
  });
});

describe('an API key', () => {
  it('in its header is never anonymous either: verified on a public route as in Authorization', async () => {
    const { clientId } = await makeClient(fx.gw.gateway.store, 'acme', []);
    const { apiKey } = await makeApiKey(fx.gw.gateway.store, clientId);
    const proxied = WAYS.slice(0, 4);
    for (const line of [`X-API-Key: ${apiKey}`, `Authorization: Bearer ${apiKey}`]) {
      for (const way of proxied)
        expect(verdictOf(way, await way.send([line])), way.name).toBe(ADMITTED);
      const forged = line.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
      for (const way of proxied)
        expect(verdictOf(way, await way.send([forged])), way.name).toBe(REFUSED);
    }
  });
});

/**
 * Issue 44: the session cookie on an `auth: session` route, one verdict per
 * spelling on the three ways that take it — proxied, WebSocket upgrade (from
 * its own origin), forward-auth. `V` is a live session's cookie value, `T`
 * Alice's token.
 */
const SESSION_WAYS: Way[] = [
  {
    name: 'a proxied request',
    send: (l) => exchange('/app/x', [...l, 'Connection: close']),
    admittedFor: echoed,
  },
  {
    name: 'a WebSocket upgrade',
    send: (l) =>
      exchange('/live/x', [
        ...l,
        'Origin: http://gw',
        'Connection: Upgrade',
        'Upgrade: websocket',
        'Sec-WebSocket-Version: 13',
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
      ]),
    admittedFor: (answer) =>
      answer.status === 101 ? (sockets.upgrades.at(-1)?.['x-tenant-id'] as string) : undefined,
  },
  {
    name: 'forward-auth',
    send: (l) => exchange('/auth/verify', [...l, 'X-Original-URI: /app/x', 'Connection: close']),
    admittedFor: (answer) => (answer.status === 200 ? answer.headers['x-tenant-id'] : undefined),
  },
];

const N = '__Host-tg_session';
/** Header lines, with `{v}` for the session's cookie value and `{t}` for the token, and the verdict. */
const COOKIE_SPELLINGS: [string, string[], string][] = [
  ['exact', [`Cookie: ${N}={v}`], ADMITTED],
  ['among others, no spaces', [`Cookie: a=1;${N}={v};b=2`], ADMITTED],
  ['in a second Cookie line', ['Cookie: a=1', `Cookie: ${N}={v}`], ADMITTED],
  ['the header name in lower case', [`cookie: ${N}={v}`], ADMITTED],
  ['quoted', [`Cookie: ${N}="{v}"`], ADMITTED],
  ['the name in upper case (another cookie)', [`Cookie: __HOST-tg_session={v}`], NO_CREDENTIAL],
  ['an empty value', [`Cookie: ${N}=`], NO_CREDENTIAL],
  ['two of them in one line', [`Cookie: ${N}={v}; ${N}={v}`], REFUSED],
  ['two of them in two lines', [`Cookie: ${N}={v}`, `Cookie: ${N}={v}`], REFUSED],
  ['a forged secret', [`Cookie: ${N}={v}x`], REFUSED],
  ['truncated', [`Cookie: ${N}={v:-3}`], REFUSED],
  ['a bearer beside a forged one', ['Authorization: Bearer {t}', `Cookie: ${N}={v}x`], ADMITTED],
  [
    'Basic beside it',
    [`Authorization: ${basic(ALICE.email, ALICE.password)}`, `Cookie: ${N}={v}`],
    ADMITTED,
  ],
];

describe.each(COOKIE_SPELLINGS)('a session cookie, %s', (_name, spelling, expected) => {
  it(`is one verdict on every way: ${expected}`, async () => {
    const lines = spelling.map((line) =>
      line
        .replaceAll('{v:-3}', session.slice(0, -3))
        .replaceAll('{v}', session)
        .replaceAll('{t}', token),
    );
    const verdicts: Record<string, string> = {};
    for (const way of SESSION_WAYS) verdicts[way.name] = verdictOf(way, await way.send(lines));
    expect(verdicts).toEqual(Object.fromEntries(SESSION_WAYS.map((way) => [way.name, expected])));
  });
});
