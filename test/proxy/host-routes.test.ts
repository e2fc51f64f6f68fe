/**
 * Issue 15: `routes[].hosts`. Routes are chosen by host (exact, then one
 * wildcard label, then routes without hosts), then by longest prefix, as an
 * ingress does. The host is the one the upstream will be told: Host, and a
 * trusted proxy's X-Forwarded-Host, which must select the same route; an
 * untrusted client's X-Forwarded-Host is replaced, never believed. Forward-auth
 * reads the ingress's account of the original host. Tenant host rules keep
 * working on a host route.
 */
import { request } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { bearer, startTestGateway, type TestGateway } from '../support/gateway.js';
import {
  ALICE,
  startMemoryIdentityFixture,
  tokenFor,
  type IdentityFixture,
} from '../support/identity-fixture.js';
import {
  startUpstream,
  startWebSocketUpstream,
  type CountingUpstream,
  type WebSocketUpstream,
} from '../support/upstream.js';

let fx: IdentityFixture;
let trustingGw: TestGateway;
let ws: WebSocketUpstream;
const upstreams: Record<string, CountingUpstream> = {};
let token: string;
let trustingToken: string;

/** An upstream that says who it is and what it was sent. */
const named = (name: string) =>
  startUpstream((req, res) => {
    req.on('end', () =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ upstream: name, url: req.url, headers: req.headers })),
    );
  });

beforeAll(async () => {
  for (const name of ['api', 'wildcard', 'anyhost', 'admin', 'tenants']) {
    upstreams[name] = await named(name);
  }
  ws = await startWebSocketUpstream();
  const url = (name: string) => (upstreams[name] as CountingUpstream).url;
  fx = await startMemoryIdentityFixture({
    routes: [
      { prefix: '/', hosts: ['api.example.com'], upstream: url('api') },
      { prefix: '/orders', hosts: ['*.example.com'], upstream: url('wildcard') },
      { prefix: '/orders', upstream: url('anyhost') },
      { prefix: '/live', hosts: ['live.example.com'], upstream: ws.url },
      {
        prefix: '/admin',
        hosts: ['admin.example.com'],
        upstream: url('admin'),
        tenantTypes: ['usertenant'],
      },
      {
        prefix: '/t',
        hosts: ['*.tenants.example.com'],
        upstream: url('tenants'),
        tenant: { host: ':tenant_id.tenants.example.com' },
      },
    ],
  });
  trustingGw = await startTestGateway({ ...fx.config, trustedProxies: ['127.0.0.1'] });
  token = (await tokenFor(fx.gw.url, ALICE, 'acme')).access_token;
  trustingToken = (await tokenFor(trustingGw.url, ALICE, 'acme')).access_token;
});

afterAll(async () => {
  await trustingGw?.close();
  await fx?.close();
  await ws?.close();
  await Promise.all(Object.values(upstreams).map((u) => u.close()));
});

interface Answer {
  status: number;
  upstream?: string;
  error?: string;
  headers?: Record<string, string>;
}

/** A request with the Host (and headers) given, as a client or proxy would send it. */
function get(
  path: string,
  host: string,
  headers: Record<string, string> = {},
  gateway = fx.gw,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${gateway.url}${path}`,
      // Each gateway has a store of its own: a token of the one asked.
      {
        headers: {
          host,
          authorization: bearer(gateway === trustingGw ? trustingToken : token),
          ...headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          const body = JSON.parse(text) as Record<string, unknown>;
          resolve({
            status: res.statusCode ?? 0,
            upstream: body['upstream'] as string | undefined,
            error: body['error'] as string | undefined,
            headers: body['headers'] as Record<string, string> | undefined,
          });
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('routes chosen by host, then prefix', () => {
  it.each([
    ['api.example.com', '/orders/1', 'api'], // its exact host beats a longer prefix for any host
    ['API.Example.COM.:8080', '/orders/1', 'api'], // letter case, trailing dot and port aside
    ['shop.example.com', '/orders/1', 'wildcard'],
    ['a.b.example.com', '/orders/1', 'anyhost'], // the wildcard is one label
    ['example.com', '/orders/1', 'anyhost'],
    ['other.test', '/orders/1', 'anyhost'],
    ['127.0.0.1', '/orders/1', 'anyhost'],
  ])('Host %s, %s → the %s upstream', async (host, path, name) => {
    const res = await get(path, host);
    expect(res.status).toBe(200);
    expect(res.upstream).toBe(name);
    // The upstream is told the host the route was chosen by.
    expect(res.headers?.['host']).toBe(host);
    expect(res.headers?.['x-forwarded-host']).toBe(host);
  });

  it('falls through to the routes without hosts, and 404 when none has the path', async () => {
    expect((await get('/admin/x', 'api.example.com')).upstream).toBe('api');
    const nowhere = await get('/admin/x', 'other.test');
    expect(nowhere.status).toBe(404);
    expect(nowhere.error).toBe('not_found');
    expect((await get('/billing', 'shop.example.com')).status).toBe(404);
  });

  it("the host route's own rules apply: tenantTypes on admin.example.com", async () => {
    const res = await get('/admin/x', 'admin.example.com');
    expect(res.status).toBe(403);
    expect(res.error).toBe('forbidden');
    expect(upstreams['admin']?.counts.received).toBe(0);
  });

  it('a tenant host rule on a wildcard host route: only the token’s tenant passes', async () => {
    const own = await get('/t/x', 'acme.tenants.example.com');
    expect(own.status).toBe(200);
    expect(own.upstream).toBe('tenants');
    const other = await get('/t/x', 'globex.tenants.example.com');
    expect(other.status).toBe(403);
    expect(other.error).toBe('tenant_mismatch');
  });

  it('a malformed Host is refused (400), not matched as some other host', async () => {
    for (const host of ['api.example.com@evil.test', 'api.example.com:80:80', 'api..example.com']) {
      const res = await get('/orders/1', host);
      expect(res.status, host).toBe(400);
      expect(res.error).toBe('invalid_request');
    }
  });

  it('two Host lines are refused (400): upstreams disagree on which counts', async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(fx.gw.url).port), '127.0.0.1');
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString()));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
      socket.write(
        'GET /admin/x HTTP/1.1\r\nHost: other.test\r\nHost: admin.example.com\r\n' +
          `Authorization: ${bearer(token)}\r\nConnection: close\r\n\r\n`,
      );
    });
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toContain('"invalid_request"');
  });
});

describe('X-Forwarded-Host', () => {
  it('from an untrusted client: never believed, replaced by Host for the upstream', async () => {
    const res = await get('/orders/1', 'other.test', { 'x-forwarded-host': 'api.example.com' });
    expect(res.upstream).toBe('anyhost');
    expect(res.headers?.['x-forwarded-host']).toBe('other.test');
    const admin = await get('/admin/x', 'other.test', { 'x-forwarded-host': 'admin.example.com' });
    expect(admin.status).toBe(404);
  });

  it('from a trusted proxy: chooses the route with Host, and both must agree', async () => {
    const agreed = await get(
      '/orders/1',
      'shop.example.com',
      { 'x-forwarded-host': 'shop.example.com' },
      trustingGw,
    );
    expect(agreed.upstream).toBe('wildcard');
    for (const [host, forwarded] of [
      ['internal.svc', 'api.example.com'],
      ['api.example.com', 'api.example.com, shop.example.com'],
      ['other.test', 'admin.example.com'],
    ] as const) {
      const res = await get('/orders/1', host, { 'x-forwarded-host': forwarded }, trustingGw);
      expect(res.status, `${host} / ${forwarded}`).toBe(400);
      expect(res.error).toBe('invalid_request');
    }
  });
});

describe('forward-auth on host routes', () => {
  const verify = (path: string, headers: Record<string, string>) =>
    new Promise<{ status: number; tenant?: string; error?: string }>((resolve, reject) => {
      const req = request(
        `${fx.gw.url}${path}`,
        { headers: { authorization: bearer(token), ...headers } },
        (res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => (text += chunk.toString()));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              tenant: res.headers['x-tenant-id'] as string | undefined,
              error: text === '' ? undefined : (JSON.parse(text) as { error: string }).error,
            }),
          );
        },
      );
      req.on('error', reject);
      req.end();
    });

  it("Traefik: X-Forwarded-Host and -Uri name the original request (the auth request's Host is the gateway's)", async () => {
    const ok = await verify('/auth/verify', {
      host: 'tenant-gateway.auth.svc',
      'x-forwarded-host': 'api.example.com',
      'x-forwarded-uri': '/admin/x',
    });
    expect(ok.status).toBe(200);
    expect(ok.tenant).toBe('acme');
    const admin = await verify('/auth/verify', {
      host: 'tenant-gateway.auth.svc',
      'x-forwarded-host': 'admin.example.com',
      'x-forwarded-uri': '/admin/x',
    });
    expect(admin.status).toBe(403);
    expect(admin.error).toBe('forbidden');
  });

  it("ingress-nginx: X-Original-URL's authority", async () => {
    const admin = await verify('/auth/verify', {
      host: 'tenant-gateway.auth.svc',
      'x-original-url': 'https://admin.example.com/admin/x',
    });
    expect(admin.status).toBe(403);
    const tenant = await verify('/auth/verify', {
      host: 'tenant-gateway.auth.svc',
      'x-original-url': 'https://globex.tenants.example.com/t/x',
    });
    expect(tenant.status).toBe(403);
    expect(tenant.error).toBe('tenant_mismatch');
  });

  it('Envoy: the original path on the verify path and the original Host', async () => {
    expect((await verify('/auth/verify/admin/x', { host: 'admin.example.com' })).status).toBe(403);
    expect((await verify('/auth/verify/admin/x', { host: 'api.example.com' })).status).toBe(200);
  });

  it("without X-Forwarded-Host or X-Original-URL the auth request's own Host is not the original's: 400", async () => {
    const res = await verify('/auth/verify', {
      host: 'admin.example.com',
      'x-original-uri': '/admin/x',
    });
    expect(res.status).toBe(400);
    expect(res.error).toBe('invalid_request');
  });

  it('sources that select different routes are refused (400), whichever a client added', async () => {
    const cases: Record<string, string>[] = [
      {
        host: 'tenant-gateway.auth.svc',
        'x-original-url': 'https://admin.example.com/admin/x',
        'x-forwarded-host': 'api.example.com',
      },
      { host: 'admin.example.com', 'x-forwarded-host': 'api.example.com' },
    ];
    for (const headers of cases) {
      const path = headers.host === 'admin.example.com' ? '/auth/verify/admin/x' : '/auth/verify';
      const res = await verify(path, headers);
      expect(res.status, JSON.stringify(headers)).toBe(400);
      expect(res.error).toBe('invalid_request');
    }
  });
});

describe('WebSocket upgrades', () => {
  const open = (host: string) =>
    new Promise<number>((resolve) => {
      const socket = new WebSocket(`${fx.gw.url.replace('http', 'ws')}/live`, {
        headers: { host, authorization: bearer(token) },
      });
      socket.on('open', () => {
        socket.close();
        resolve(101);
      });
      socket.on('unexpected-response', (_req, res) => {
        resolve(res.statusCode ?? 0);
        socket.terminate();
      });
      socket.on('error', () => {});
    });

  it('are routed by host like any request', async () => {
    expect(await open('live.example.com')).toBe(101);
    expect(ws.upgrades.at(-1)?.['host']).toBe('live.example.com');
    expect(await open('other.test')).toBe(404);
  });
});
