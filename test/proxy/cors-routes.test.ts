/**
 * Issue 15: `cors` on a route and at the top level. A browser's sequence,
 * header for header as Chrome and Firefox send it: the preflight (OPTIONS,
 * Origin, Access-Control-Request-Method/-Headers, no token) answered by the
 * gateway before authentication, then the actual request with its token.
 * Every answer of the route — the upstream's, and the gateway's own
 * 401/403/502 — carries the CORS headers, so the page can read why it was
 * refused; the upstream's own CORS headers never override the route's policy.
 */
import { request } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic, bearer } from '../support/gateway.js';
import {
  ALICE,
  startMemoryIdentityFixture,
  tokenFor,
  type IdentityFixture,
} from '../support/identity-fixture.js';
import { refusedUpstream, startUpstream, type CountingUpstream } from '../support/upstream.js';

const APP = 'https://app.example.com';

let fx: IdentityFixture;
let upstream: CountingUpstream;
let token: string;

beforeAll(async () => {
  // An upstream with CORS of its own, far wider than the route allows.
  upstream = await startUpstream((req, res) => {
    req.on('end', () => {
      res
        .writeHead(200, {
          'content-type': 'application/json',
          vary: 'Accept-Encoding',
          'access-control-allow-origin': '*',
          'access-control-allow-methods': 'GET, POST, PUT, DELETE, PATCH',
          'x-order-count': '3',
        })
        .end(JSON.stringify({ method: req.method, headers: req.headers }));
    });
  });
  const down = await refusedUpstream();
  fx = await startMemoryIdentityFixture({
    cors: { origins: [APP], exposeHeaders: ['X-Request-Id'] },
    routes: [
      {
        prefix: '/orders',
        upstream: upstream.url,
        tenant: { header: 'X-Tenant-Id' },
        cors: {
          origins: [APP, 'https://*.partner.example'],
          methods: ['GET', 'POST', 'DELETE'],
          headers: ['Authorization', 'Content-Type', 'X-Tenant-Id'],
          exposeHeaders: ['X-Order-Count', 'X-Request-Id'],
          credentials: true,
          maxAgeSeconds: 300,
        },
      },
      { prefix: '/down', upstream: down.url, cors: { origins: [APP] } },
      { prefix: '/open', upstream: upstream.url, auth: 'none', cors: { origins: ['*'] } },
      { prefix: '/plain', upstream: upstream.url },
    ],
  });
  token = (await tokenFor(fx.gw.url, ALICE, 'acme')).access_token;
});

afterAll(async () => {
  await fx?.close();
  await upstream?.close();
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function send(method: string, path: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${fx.gw.url}${path}`, { method, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** What a browser sends before a cross-origin GET with a bearer token. */
const preflight = (path: string, origin = APP, method = 'GET') =>
  send('OPTIONS', path, {
    origin,
    'access-control-request-method': method,
    'access-control-request-headers': 'authorization,x-tenant-id',
    'sec-fetch-mode': 'cors',
  });

function varyOf(answer: Answer): string[] {
  return String(answer.headers.vary ?? '')
    .split(',')
    .map((v) => v.trim().toLowerCase())
    .filter((v) => v !== '');
}

describe('a route with cors', () => {
  it('answers the preflight itself, without a token, and the upstream never sees it', async () => {
    const before = upstream.counts.received;
    const res = await preflight('/orders/1');
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe(APP);
    expect(res.headers['access-control-allow-methods']).toBe('GET,POST,DELETE');
    expect(res.headers['access-control-allow-headers']).toBe(
      'Authorization,Content-Type,X-Tenant-Id',
    );
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    expect(res.headers['access-control-max-age']).toBe('300');
    expect(varyOf(res)).toContain('origin');
    expect(res.headers['x-request-id']).toMatch(/\S/);
    expect(res.body).toBe('');
    expect(upstream.counts.received).toBe(before);
  });

  it("then the actual request: the upstream's answer with the route's CORS headers, not the upstream's", async () => {
    const res = await send('GET', '/orders/1', {
      origin: APP,
      authorization: bearer(token),
      'x-tenant-id': 'acme',
    });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).headers['x-tenant-id']).toBe('acme');
    expect(res.headers['access-control-allow-origin']).toBe(APP);
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    expect(res.headers['access-control-expose-headers']).toBe('X-Order-Count,X-Request-Id');
    // The upstream's wider grant is gone; its Vary is kept, with Origin added.
    expect(res.headers['access-control-allow-methods']).toBeUndefined();
    expect(varyOf(res)).toEqual(['accept-encoding', 'origin']);
    expect(res.headers['x-order-count']).toBe('3');
  });

  it("the gateway's own refusals carry the CORS headers: 401, 403, 502", async () => {
    const noToken = await send('GET', '/orders/1', { origin: APP });
    const otherTenant = await send('GET', '/orders/1', {
      origin: APP,
      authorization: bearer(token),
      'x-tenant-id': 'globex',
    });
    const down = await send('GET', '/down/1', { origin: APP, authorization: bearer(token) });
    for (const [res, status, code] of [
      [noToken, 401, 'invalid_token'],
      [otherTenant, 403, 'tenant_mismatch'],
      [down, 502, 'bad_gateway'],
    ] as const) {
      expect(res.status).toBe(status);
      expect(JSON.parse(res.body).error).toBe(code);
      expect(res.headers['access-control-allow-origin']).toBe(APP);
      expect(varyOf(res)).toContain('origin');
    }
  });

  it('an origin not listed gets no Access-Control-Allow-Origin, on the preflight or the answer', async () => {
    const pre = await preflight('/orders/1', 'https://evil.example');
    expect(pre.status).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBeUndefined();
    const res = await send('GET', '/orders/1', {
      origin: 'https://evil.example',
      authorization: bearer(token),
      'x-tenant-id': 'acme',
    });
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(varyOf(res)).toContain('origin');
  });

  it('https://*.partner.example allows one label in place of *, nothing more', async () => {
    const one = await preflight('/orders/1', 'https://shop.partner.example');
    expect(one.headers['access-control-allow-origin']).toBe('https://shop.partner.example');
    for (const origin of [
      'https://partner.example',
      'https://a.b.partner.example',
      'http://shop.partner.example',
      'https://shop.partner.example.evil.example',
      'https://shop-partner.example',
    ]) {
      const res = await preflight('/orders/1', origin);
      expect(res.headers['access-control-allow-origin'], origin).toBeUndefined();
    }
  });

  it('an OPTIONS that is not a preflight goes to the upstream like any request (token needed)', async () => {
    const without = await send('OPTIONS', '/orders/1', { origin: APP });
    expect(without.status).toBe(401);
    const before = upstream.counts.received;
    const res = await send('OPTIONS', '/orders/1', {
      origin: APP,
      authorization: bearer(token),
      'x-tenant-id': 'acme',
    });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).method).toBe('OPTIONS');
    expect(res.headers['access-control-allow-origin']).toBe(APP);
    expect(upstream.counts.received).toBe(before + 1);
  });

  it('origins [*]: any origin, Access-Control-Allow-Origin: *', async () => {
    const res = await send('GET', '/open/x', { origin: 'https://anyone.example' });
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    // The upstream's own grant of methods is still dropped: the route's policy answers.
    expect(res.headers['access-control-allow-methods']).toBeUndefined();
  });
});

describe('preflights on raw sockets', () => {
  /** Writes `raw` on one connection and reads until the server closes it. */
  const exchange = (raw: string) =>
    new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(fx.gw.url).port), '127.0.0.1');
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString('latin1')));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
      socket.write(raw);
    });
  const preflightHead = `OPTIONS /orders/1 HTTP/1.1\r\nHost: gw\r\nOrigin: ${APP}\r\nAccess-Control-Request-Method: GET\r\n`;
  const smuggled = `GET /orders/2 HTTP/1.1\r\nHost: gw\r\nX-Tenant-Id: globex\r\n\r\n`;

  it.each([
    ['a Content-Length body', `Content-Length: ${smuggled.length}\r\n\r\n${smuggled}`],
    [
      'a chunked body',
      `Transfer-Encoding: chunked\r\n\r\n${smuggled.length.toString(16)}\r\n${smuggled}\r\n0\r\n\r\n`,
    ],
  ])(
    'a preflight with %s holding a request, then a pipelined GET: the body is never a request, the GET is checked',
    async (_name, rest) => {
      const before = upstream.requests.length;
      const text = await exchange(
        `${preflightHead}${rest}GET /orders/3 HTTP/1.1\r\nHost: gw\r\nAuthorization: ${bearer(token)}\r\n` +
          'X-Tenant-Id: acme\r\nConnection: close\r\n\r\n',
      );
      const statuses = [...text.matchAll(/^HTTP\/1\.1 (\d{3})/gm)].map((m) => m[1]);
      expect(statuses).toEqual(['204', '200']);
      const seen = upstream.requests.slice(before);
      expect(seen.map((r) => [r.method, r.url, r.headers['x-tenant-id']])).toEqual([
        ['GET', '/orders/3', 'acme'],
      ]);
    },
  );
});

describe('a route without cors', () => {
  it('leaves CORS to the upstream: a preflight needs a token like any request', async () => {
    const res = await preflight('/plain/x');
    expect(res.status).toBe(401);
    const ok = await send('GET', '/plain/x', { origin: APP, authorization: bearer(token) });
    expect(ok.status).toBe(200);
    expect(ok.headers['access-control-allow-origin']).toBe('*');
  });
});

describe('cors at the top level (the identity endpoints)', () => {
  it('lets a browser app log in: preflight, then GET /1/token with Basic', async () => {
    const pre = await send('OPTIONS', '/1/token?tenant_id=acme', {
      origin: APP,
      'access-control-request-method': 'GET',
      'access-control-request-headers': 'authorization',
    });
    expect(pre.status).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBe(APP);
    expect(pre.headers['access-control-allow-headers']).toBe('Authorization,Content-Type');
    const res = await send('GET', '/1/token?tenant_id=acme', {
      origin: APP,
      authorization: basic(ALICE.email, ALICE.password),
    });
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe(APP);
    expect(res.headers['access-control-expose-headers']).toBe('X-Request-Id');
  });

  it('a wrong password answers 401 with the CORS headers, and the JWKS too has them', async () => {
    const res = await send('GET', '/1/token?tenant_id=acme', {
      origin: APP,
      authorization: basic(ALICE.email, 'not-the-password'),
    });
    expect(res.status).toBe(401);
    expect(JSON.parse(res.body).error).toBe('invalid_credentials');
    expect(res.headers['access-control-allow-origin']).toBe(APP);
    const jwks = await send('GET', '/.well-known/jwks.json', { origin: APP });
    expect(jwks.status).toBe(200);
    expect(jwks.headers['access-control-allow-origin']).toBe(APP);
  });
});
