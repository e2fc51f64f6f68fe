/**
 * `listen.http2` on cleartext: h2c by prior knowledge and HTTP/1.1 on one
 * port, every request through the one dispatcher — a proxied request and
 * the refusals answered alike on both, the identity API over HTTP/2, and
 * `Upgrade: h2c` refused. HTTP/2's own spellings change nothing: request
 * trailers never reach the upstream, `:scheme` is not believed, a `Host`
 * beside `:authority` must agree with it, and cookie crumbs are one `Cookie`
 * to the session rules.
 */
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { useEchoFixture } from '../support/echo-fixture.js';
import { ALICE, BOB, tokenFor } from '../support/identity-fixture.js';
import { basic } from '../support/gateway.js';
import {
  http2Get,
  http2Request,
  http2Session,
  sendSpoofedTrailers,
} from '../support/http2-client.js';

const started = useEchoFixture((upstream) => ({
  listen: { http2: true },
  sessions: { enabled: true },
  routes: [
    {
      prefix: '/orders',
      upstream,
      tenant: { header: 'X-Tenant-Id', path: '/orders/tenants/:tenant_id' },
    },
    { prefix: '/app', upstream, auth: 'session' },
  ],
}));

const SESSION = '__Host-tg_session';

/** A new session of Alice's for acme, begun as the sign-in page begins one: its cookie's value. */
async function signedIn(): Promise<string> {
  const { gateway } = started.fx.gw;
  const alice = await gateway.store.users.findUserByEmail(ALICE.email);
  const begun = await gateway.browserSessions.start({
    userId: alice?.id as string,
    tenantId: 'acme',
    userAgent: 'vitest',
    ip: '127.0.0.1',
  });
  return begun.cookieValue;
}

/** What the echo upstream answered: the request it received. */
function echoedOf(body: string) {
  return JSON.parse(body) as {
    bodyLength: number;
    headers: Record<string, string>;
    trailers: Record<string, string>;
  };
}

/** An HTTP/1.1 answer: status, fields and body. */
async function http1Get(url: string, path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}${path}`, { headers });
  return { status: res.status, headers: Object.fromEntries(res.headers), body: await res.text() };
}

/** What differs by nature between two answers to the same request: the request id, the date. */
function comparable(headers: Record<string, string | string[]>): Record<string, string | string[]> {
  const { 'x-request-id': _id, date: _date, connection: _c, 'keep-alive': _k, ...rest } = headers;
  return rest;
}

describe('h2c by prior knowledge beside HTTP/1.1 on one port', () => {
  it('forwards an HTTP/2 request to the HTTP/1.1 upstream with :authority as Host and cookies joined', async () => {
    const { fx } = started;
    const { access_token } = await tokenFor(fx.gw.url, ALICE, 'acme');
    const host = new URL(fx.gw.url).host;
    const answer = await http2Get(fx.gw.url, '/orders/tenants/acme/items?x=1', {
      authorization: `Bearer ${access_token}`,
      cookie: ['a=1', 'b=2'],
      'x-user-id': 'spoofed',
    });
    expect(answer.status).toBe(200);
    const echoed = JSON.parse(answer.body) as { url: string; headers: Record<string, string> };
    expect(echoed.url).toBe('/orders/tenants/acme/items?x=1');
    expect(echoed.headers.host).toBe(host);
    expect(echoed.headers.cookie).toBe('a=1; b=2');
    expect(echoed.headers['x-tenant-id']).toBe('acme');
    expect(echoed.headers['x-user-id']).not.toBe('spoofed');
    expect(echoed.headers['x-forwarded-proto']).toBe('http');
    expect(Object.keys(echoed.headers).filter((name) => name.startsWith(':'))).toEqual([]);
    expect(answer.headers['x-request-id']).toMatch(/.+/);
  });

  it('forwards a request body sent without content-length (DATA frames) whole, chunked upstream', async () => {
    const { fx } = started;
    const { access_token } = await tokenFor(fx.gw.url, ALICE, 'acme');
    const session = await http2Session(fx.gw.url);
    try {
      const body = 'x'.repeat(100_000);
      const answer = await http2Request(
        session,
        '/orders/tenants/acme/items',
        { ':method': 'POST', authorization: `Bearer ${access_token}` },
        body,
      );
      expect(answer.status).toBe(200);
      const echoed = JSON.parse(answer.body) as {
        bodyLength: number;
        headers: Record<string, string>;
      };
      expect(echoed.bodyLength).toBe(body.length);
      expect(echoed.headers['transfer-encoding']).toBe('chunked');
      const empty = await http2Request(session, '/orders/tenants/acme/items', {
        ':method': 'DELETE',
        authorization: `Bearer ${access_token}`,
      });
      expect(JSON.parse(empty.body).headers['transfer-encoding']).toBeUndefined();
    } finally {
      session.close();
    }
  });

  it('never passes request trailers upstream: an identity, a credential or a tenant sent after the body stays at the gateway', async () => {
    const { fx, upstream } = started;
    const { access_token, user_id } = await tokenFor(fx.gw.url, ALICE, 'acme');
    const session = await http2Session(fx.gw.url);
    try {
      const body = await new Promise<string>((resolve, reject) => {
        const stream = session.request(
          {
            ':method': 'POST',
            ':path': '/orders/tenants/acme/items',
            authorization: `Bearer ${access_token}`,
          },
          { waitForTrailers: true },
        );
        sendSpoofedTrailers(stream);
        let text = '';
        stream.on('data', (chunk: Buffer) => (text += chunk));
        stream.on('end', () => resolve(text));
        stream.on('error', reject);
        stream.end('hello');
      });
      const echoed = echoedOf(body);
      expect(echoed.bodyLength).toBe(5);
      expect(echoed.trailers).toEqual({});
      expect(echoed.headers['x-user-id']).toBe(user_id);
      expect(echoed.headers['x-tenant-id']).toBe('acme');
      expect(echoed.headers.authorization).toBeUndefined();
      expect(upstream.requests.at(-1)?.trailers).toEqual({});
    } finally {
      session.close();
    }
  });

  it('refuses a Host that names another host than :authority, and never believes :scheme', async () => {
    const { fx, upstream } = started;
    const { access_token } = await tokenFor(fx.gw.url, ALICE, 'acme');
    const authorization = `Bearer ${access_token}`;
    const before = upstream.requests.length;
    const two = await http2Get(fx.gw.url, '/orders/items', {
      authorization,
      ':authority': new URL(fx.gw.url).host,
      host: 'evil.example',
    });
    expect(two.status).toBe(400);
    expect(JSON.parse(two.body).error).toBe('invalid_request');
    expect(upstream.requests.length).toBe(before);
    // `https` on a cleartext connection: the upstream is told what the gateway saw.
    const lying = await http2Get(fx.gw.url, '/orders/items', { authorization, ':scheme': 'https' });
    expect(lying.status).toBe(200);
    expect(echoedOf(lying.body).headers['x-forwarded-proto']).toBe('http');
  });

  it('reads session cookie crumbs as one Cookie: two session cookies are refused as over HTTP/1.1, one is admitted and never forwarded', async () => {
    const { fx } = started;
    const [a, b] = [await signedIn(), await signedIn()];
    const two = await http2Get(fx.gw.url, '/app/page', {
      cookie: [`${SESSION}=${a}`, 'x=1', `${SESSION}=${b}`],
    });
    expect(two.status).toBe(401);
    expect(JSON.parse(two.body).error).toBe('invalid_token');
    const one = await http2Get(fx.gw.url, '/app/page', {
      cookie: ['a=1', `${SESSION}=${a}`, 'b=2'],
    });
    expect(one.status).toBe(200);
    expect(echoedOf(one.body).headers).toMatchObject({
      cookie: 'a=1; b=2',
      'x-user-email': ALICE.email,
    });
  });

  it('keeps the same-origin rule of a session over HTTP/2: :scheme https on cleartext does not make an https Origin its own', async () => {
    const { fx } = started;
    const cookie = `${SESSION}=${await signedIn()}`;
    const host = new URL(fx.gw.url).host;
    const session = await http2Session(fx.gw.url);
    try {
      const post = (headers: Record<string, string>) =>
        http2Request(session, '/app/page', { ':method': 'POST', cookie, ...headers });
      const lying = await post({ ':scheme': 'https', origin: `https://${host}` });
      expect(lying.status).toBe(403);
      expect(JSON.parse(lying.body).error).toBe('csrf_refused');
      const twice = await post({ 'sec-fetch-site': 'cross-site', origin: `http://${host}` });
      expect(JSON.parse(twice.body).error).toBe('csrf_refused');
      const own = await post({ origin: `http://${host}` });
      expect(own.status).toBe(200);
    } finally {
      session.close();
    }
  });

  it('answers a header list over 16 KiB 431 headers_too_large, as HTTP/1.1 does', async () => {
    const { fx } = started;
    const big = { 'x-big': 'x'.repeat(17 * 1024) };
    const two = await http2Get(fx.gw.url, '/orders/items', big);
    expect(two.status).toBe(431);
    expect(JSON.parse(two.body).error).toBe('headers_too_large');
    const one = await fetch(`${fx.gw.url}/orders/items`, { headers: big });
    expect(one.status).toBe(431);
  });

  it('answers an Expect other than 100-continue 417 expectation_failed in JSON with a request id, as HTTP/1.1 does', async () => {
    const { fx, upstream } = started;
    const before = upstream.requests.length;
    const answer = await http2Get(fx.gw.url, '/orders/items', { expect: 'something-else' });
    expect(answer.status).toBe(417);
    expect(JSON.parse(answer.body || '{}').error).toBe('expectation_failed');
    expect(answer.headers['x-request-id']).toMatch(/.+/);
    expect(upstream.requests.length).toBe(before);
  });

  it('still serves HTTP/1.1 on the same port', async () => {
    const { fx } = started;
    const { access_token } = await tokenFor(fx.gw.url, ALICE, 'acme');
    const res = await http1Get(fx.gw.url, '/orders/tenants/acme/items', {
      authorization: `Bearer ${access_token}`,
    });
    expect(res.status).toBe(200);
  });

  it('refuses tenant_mismatch and invalid_token over HTTP/2 exactly as over HTTP/1.1', async () => {
    const { fx } = started;
    const { access_token } = await tokenFor(fx.gw.url, BOB, 'globex');
    const cases: Record<string, string>[] = [
      { authorization: `Bearer ${access_token}`, 'x-tenant-id': 'acme' },
      { authorization: 'Bearer not-a-token' },
      {},
    ];
    for (const headers of cases) {
      const one = await http1Get(fx.gw.url, '/orders/items', headers);
      const two = await http2Get(fx.gw.url, '/orders/items', headers);
      expect(two.status).toBe(one.status);
      expect(two.body).toBe(one.body);
      expect(comparable(two.headers)).toEqual(comparable(one.headers));
    }
    const mismatch = await http2Get(fx.gw.url, '/orders/items', cases[0]);
    expect(JSON.parse(mismatch.body).error).toBe('tenant_mismatch');
    const invalid = await http2Get(fx.gw.url, '/orders/items', cases[1]);
    expect(invalid.status).toBe(401);
    expect(invalid.headers['www-authenticate']).toContain('invalid_token');
  });

  it('answers the identity API over HTTP/2 (Koa through the compatibility API)', async () => {
    const { fx } = started;
    const session = await http2Session(fx.gw.url);
    try {
      const token = await http2Request(session, '/1/token?tenant_id=acme', {
        authorization: basic(ALICE.email, ALICE.password),
      });
      expect(token.status).toBe(200);
      expect(token.headers['cache-control']).toBe('no-store');
      const { access_token } = JSON.parse(token.body) as { access_token: string };
      const tenant = await http2Request(session, '/1/tenants/acme', {
        authorization: `Bearer ${access_token}`,
      });
      expect(tenant.status).toBe(200);
      expect(JSON.parse(tenant.body).tenant_id).toBe('acme');
      const signup = await http2Request(
        session,
        '/1/users',
        { ':method': 'POST', 'content-type': 'application/json' },
        JSON.stringify({ email: 'h2-signup@example.com', password: 'h2-password-1' }),
      );
      expect(signup.status).toBe(201);
      const missing = await http2Request(session, '/1/nothing-here');
      expect(missing.status).toBe(404);
      expect(JSON.parse(missing.body).error).toBe('not_found');
    } finally {
      session.close();
    }
  });

  it('refuses Upgrade: h2c with 400 and never switches or forwards it', async () => {
    const { fx, upstream } = started;
    const { access_token } = await tokenFor(fx.gw.url, ALICE, 'acme');
    const before = upstream.requests.length;
    const port = Number(new URL(fx.gw.url).port);
    for (const connection of ['Upgrade, HTTP2-Settings', undefined]) {
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest({
          port,
          host: '127.0.0.1',
          path: '/orders/items',
          headers: {
            authorization: `Bearer ${access_token}`,
            upgrade: 'h2c',
            'http2-settings': 'AAMAAABkAAQAAP__',
            ...(connection === undefined ? {} : { connection }),
          },
        });
        req.on('upgrade', () => reject(new Error('switched protocols')));
        req.on('response', (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        req.end();
      });
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body).error).toBe('invalid_request');
    }
    expect(upstream.requests.length).toBe(before);
  });

  it('reads a connection that sends part of the preface and then diverges as HTTP/1.1', async () => {
    const { fx } = started;
    const port = Number(new URL(fx.gw.url).port);
    // "PRI * HTTP/1.1": the preface's first 11 bytes, then not HTTP/2.
    const answer = await new Promise<string>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      let text = '';
      socket.on('data', (c: Buffer) => (text += c.toString('latin1')));
      socket.on('close', () => resolve(text));
      socket.write('PRI * HT');
      setTimeout(() => socket.write('TP/1.1\r\nHost: x\r\n\r\n'), 50);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 (400|404|405)/);
  });
});
