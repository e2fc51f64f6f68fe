/**
 * Issue 30, item 2: a client cannot split a log line. Every way a client's
 * text reaches a line — a Basic user name (the `login_failed` audit event, in
 * the log and in the store's stream), signup, the User-Agent, the path, a
 * tenant it names in a header, a path or a query, `X-Request-Id`,
 * `X-Forwarded-For` from a trusted proxy, forward-auth's original request, a
 * WebSocket upgrade — is driven through a real gateway with U+2028, U+2029,
 * U+0085 (NEL), U+009B (CSI) in it. The captured log is then split as
 * Python's `splitlines` splits (which breaks at U+2028, U+2029 and U+0085,
 * as several log shippers do): every piece must be one whole JSON line, and
 * each value must come back exactly as the client sent it.
 */
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { USER_STREAM } from '../../src/store/audit-log.js';
import { fixtureSuite } from '../support/fixture-suite.js';
import { basic, bearer } from '../support/gateway.js';
import { ALICE } from '../support/identity-fixture.js';
import { lineWhere as loggedLine } from '../support/log-lines.js';
import { rawUpgrade } from '../support/raw-upgrade.js';
import { startEchoUpstream } from '../support/upstream.js';

/** What would start a forged line, and what a terminal would act on. */
const FORGED = '{"event":"forged","level":60}';
const EMAIL = `x\u2028${FORGED}\u2029\u0085\u009b[31m@example.com`;
/** Basic's user-id ends at the first colon (RFC 7617 §2): the forged line's start, unparsed. */
const BASIC_USER = EMAIL.slice(0, EMAIL.indexOf(':'));

const s = fixtureSuite(
  { echo: startEchoUpstream },
  ({ echo }) => ({
    routes: [
      { prefix: '/orders', upstream: echo.url, tenant: { path: '/orders/tenants/:tenant_id' } },
      { prefix: '/echo', upstream: echo.url, tenant: { header: 'X-Tenant-Id' } },
    ],
    // The test's own address is a proxy: X-Forwarded-For is believed.
    trustedProxies: ['127.0.0.1/32'],
  }),
  { logged: true, token: true },
);

/**
 * Sends a request as bytes: each character of `head` is one byte (latin1), so
 * `\x85` goes out as the byte 0x85 — which Node reads back as U+0085 in a
 * header value. Resolves with the answer's status and request id.
 */
function rawRequest(head: string): Promise<{ status: number; requestId: string | undefined }> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(s.gw.url).port), '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
    socket.on('close', () =>
      resolve({
        status: Number(answer.split(' ')[1]),
        requestId: /^x-request-id: (.*)\r$/im.exec(answer)?.[1],
      }),
    );
    socket.on('error', reject);
    // Written, not ended: a client that half-closes may be taken for one that left.
    socket.write(Buffer.from(`${head}Host: gw\r\nConnection: close\r\n\r\n`, 'latin1'));
  });
}

/** The bytes of `s` in UTF-8, one character per byte: how a client sends UTF-8 in a header. */
const utf8Bytes = (s: string) => Buffer.from(s, 'utf8').toString('latin1');

/** Python's `str.splitlines`: its line boundaries, U+2028, U+2029 and U+0085 among them. */
function splitlines(s: string): string[] {
  return s.split(/\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/).filter((line) => line !== '');
}

type Line = Record<string, unknown>;

/** The captured lines as splitlines cuts them, each parsed (a piece that is not JSON fails). */
function lines(): Line[] {
  return splitlines(s.text).map((piece) => {
    try {
      return JSON.parse(piece) as Line;
    } catch {
      throw new Error(`a piece of the log is not a JSON line: ${JSON.stringify(piece)}`);
    }
  });
}

const lineWhere = (match: (line: Line) => boolean): Promise<Line> => loggedLine(lines, match);

const byRequest =
  (requestId: string | null | undefined, msg = 'request') =>
  (line: Line) =>
    line.msg === msg && line.requestId === requestId;

describe('a client cannot split or colour a log line', () => {
  it('a Basic user name: the login_failed audit event, in the log and in the stream', async () => {
    const res = await fetch(`${s.gw.url}/1/token?tenant_id=acme`, {
      headers: { authorization: basic(`${BASIC_USER}\u2029\u0085@example.com`, 'x') },
    });
    expect(res.status).toBe(401);
    const line = await lineWhere((l) => (l.audit as Line | undefined)?.event === 'login_failed');
    expect((line.audit as Line).user_email).toBe(`${BASIC_USER}\u2029\u0085@example.com`);

    // As appended to the store's stream (what Redis would keep).
    const entries = await s.gw.gateway.store
      .auditLog({ maxEventsPerStream: 1000 })
      .read(USER_STREAM, 0);
    const stored = entries.map((entry) => entry.event);
    const failed = stored.find((e) => e.includes('login_failed')) as string;
    expect(failed).not.toMatch(/[\u007f-\u009f\u2028\u2029]/);
    expect(splitlines(failed)).toHaveLength(1);
    expect((JSON.parse(failed) as Line).user_email).toBe(`${BASIC_USER}\u2029\u0085@example.com`);
  });

  it('signup: a name and an e-mail with line separators', async () => {
    for (const body of [
      { email: 'named@example.com', password: 'named-password-1', name: `N\u2028${FORGED}` },
      { email: EMAIL, password: 'named-password-1' },
    ]) {
      const res = await fetch(`${s.gw.url}/1/users`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect([201, 400]).toContain(res.status);
      await lineWhere(byRequest(res.headers.get('x-request-id')));
    }
  });

  it('the User-Agent, X-Forwarded-For and X-Request-Id of a proxied request', async () => {
    const agent = `curl\x85${FORGED}\x9b[31m${utf8Bytes('\u2028')}`;
    // One hop: X-Forwarded-For is a comma-separated list.
    const forwarded = `203.0.113.9\x85{"event":"forged"}`;
    const { status, requestId } = await rawRequest(
      `GET /echo/x HTTP/1.1\r\nAuthorization: ${bearer(s.token)}\r\nUser-Agent: ${agent}\r\n` +
        `X-Forwarded-For: ${forwarded}\r\nX-Request-Id: id\x85${FORGED}\r\n`,
    );
    expect(status).toBe(200);
    // Not a sane id: a new one was made, and the client's is nowhere.
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(await lineWhere(byRequest(requestId))).toMatchObject({
      userAgent: agent,
      clientIp: forwarded,
      status: 200,
    });
  });

  it('a tenant named in a header, a path segment, an api path and a query', async () => {
    const header = await rawRequest(
      `GET /echo/x HTTP/1.1\r\nAuthorization: ${bearer(s.token)}\r\nX-Tenant-Id: \x85${FORGED}\r\n`,
    );
    expect(header.status).toBe(403);
    expect(await lineWhere(byRequest(header.requestId))).toMatchObject({
      reason: 'tenant_mismatch',
      requestedTenant: `\u0085${FORGED}`,
    });

    const named = `\u2028${FORGED}\u0085`;
    const encoded = encodeURIComponent(named);
    for (const path of [`/orders/tenants/${encoded}/x`, `/1/tenants/${encoded}`]) {
      const res = await fetch(`${s.gw.url}${path}`, {
        headers: { authorization: bearer(s.token) },
      });
      expect(res.status).toBe(403);
      expect(await lineWhere(byRequest(res.headers.get('x-request-id')))).toMatchObject({
        reason: 'tenant_mismatch',
        requestedTenant: named,
      });
    }

    const res = await fetch(`${s.gw.url}/1/token?tenant_id=${encoded}`, {
      headers: { authorization: basic(ALICE.email, ALICE.password) },
    });
    expect(res.status).toBe(403);
    expect(await lineWhere(byRequest(res.headers.get('x-request-id')))).toMatchObject({
      reason: 'tenant_access_denied',
      requestedTenant: named,
    });
  });

  it('the original request of forward-auth', async () => {
    const uri = `/echo/\x85${FORGED}`;
    const host = `h\x85${FORGED}`;
    const { requestId } = await rawRequest(
      `GET /auth/verify HTTP/1.1\r\nAuthorization: ${bearer(s.token)}\r\n` +
        `X-Original-URI: ${uri}\r\nX-Original-Method: GE\x9bT\r\nX-Forwarded-Host: ${host}\r\n`,
    );
    expect(await lineWhere(byRequest(requestId))).toMatchObject({
      route: 'forward-auth',
      original: { method: 'GE\u009bT', uri, host },
    });
  });

  it('a refused WebSocket upgrade', async () => {
    const named = `\u2028${FORGED}`;
    const answer = await rawUpgrade(
      s.gw.url,
      `/orders/tenants/${encodeURIComponent(named)}/ws`,
      [`Authorization: ${bearer(s.token)}`],
      'close',
    );
    expect(answer).toMatch(/^HTTP\/1\.1 403 /);
    const requestId = /^x-request-id: (.*)\r$/im.exec(answer)?.[1];
    expect(await lineWhere(byRequest(requestId, 'upgrade refused'))).toMatchObject({
      reason: 'tenant_mismatch',
      requestedTenant: named,
    });
  });

  it('a byte the HTTP parser refuses: non-ASCII in the path, DEL in the path or a header', async () => {
    // What the access line relies on: its path is printable ASCII, and a
    // header value holds no DEL (only C1 controls are left to escape there).
    for (const head of [
      `GET /x${utf8Bytes('\u2028')}\x85 HTTP/1.1\r\n`,
      'GET /x\x7f HTTP/1.1\r\n',
      'GET /echo/x HTTP/1.1\r\nUser-Agent: a\x7fb\r\n',
    ]) {
      expect((await rawRequest(head)).status, JSON.stringify(head)).toBe(400);
    }
    await lineWhere((l) => l.msg === 'request refused by the HTTP server');
  });

  it('leaves no raw U+2028, U+2029 or C1 control anywhere in the log', () => {
    expect(s.text.length).toBeGreaterThan(0);
    expect(s.text).not.toMatch(/[\u007f-\u009f\u2028\u2029]/);
    // One record per line as a plain `\n` splitter sees it too.
    expect(splitlines(s.text)).toEqual(s.text.split('\n').filter((l) => l !== ''));
  });
});
