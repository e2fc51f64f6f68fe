/**
 * Forward-auth behind a real nginx (DESIGN §1 `/auth/verify`): nginx asks the
 * gateway with `auth_request`, copies the verified identity into the headers
 * it sends upstream, and answers refusals itself. The upstream is a plain
 * echo server that counts its hits, so "refused" means it never saw the
 * request at all.
 */
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bearer } from '../support/gateway.js';
import {
  ALICE,
  startMemoryIdentityFixture,
  tokenFor,
  type IdentityFixture,
} from '../support/identity-fixture.js';
import { startNginx, type TestNginx } from '../support/nginx.js';

interface EchoUpstream {
  server: Server;
  port: number;
  /** Every request the upstream received, in order. */
  seen: { method: string; url: string; headers: IncomingHttpHeaders }[];
}

let fx: IdentityFixture;
let upstream: EchoUpstream;
let nginx: TestNginx;
let alice: { access_token: string; user_id: string };

beforeAll(async () => {
  fx = await startMemoryIdentityFixture({
    routes: [
      // Forward-auth-only routes: nginx proxies, the gateway only judges.
      { prefix: '/orders', tenant: { path: '/orders/tenants/:tenant_id' } },
      { prefix: '/admin', hosts: ['admin.example.com'], tenantTypes: ['usertenant'] },
    ],
  });
  upstream = await startEchoUpstream();
  const gatewayPort = new URL(fx.gw.url).port;
  nginx = await startNginx(`
    location = /_auth {
      internal;
      proxy_pass http://127.0.0.1:${gatewayPort}/auth/verify;
      proxy_pass_request_body off;
      proxy_set_header Content-Length "";
      proxy_set_header X-Original-URI $request_uri;
      proxy_set_header X-Original-Method $request_method;
      # The original host, for routes that name hosts (docs/forward-auth.md);
      # it also overwrites any X-Forwarded-Host the client sent.
      proxy_set_header X-Forwarded-Host $host;
    }
    location / {
      auth_request /_auth;
      # As docs/forward-auth.md shows it: all four identity headers set, each
      # replacing the client's own copy.
      auth_request_set $tenant_id $upstream_http_x_tenant_id;
      auth_request_set $tenant_type $upstream_http_x_tenant_type;
      auth_request_set $user_id $upstream_http_x_user_id;
      auth_request_set $user_email $upstream_http_x_user_email;
      proxy_set_header X-Tenant-Id $tenant_id;
      proxy_set_header X-Tenant-Type $tenant_type;
      proxy_set_header X-User-Id $user_id;
      proxy_set_header X-User-Email $user_email;
      proxy_pass http://127.0.0.1:${upstream.port};
    }
  `);
  alice = (await tokenFor(fx.gw.url, ALICE, 'acme')) as typeof alice;
});

afterAll(async () => {
  await nginx?.stop();
  if (upstream !== undefined) {
    upstream.server.closeAllConnections();
    await new Promise((resolve) => upstream.server.close(resolve));
  }
  await fx?.close();
});

beforeEach(() => {
  upstream.seen.length = 0;
});

const throughNginx = (path: string, init: RequestInit = {}) =>
  fetch(`http://127.0.0.1:${nginx.port}${path}`, init);

/** The error log rides along with a failed status check: it says why nginx answered as it did. */
function expectStatus(res: { status: number }, status: number): void {
  expect(res.status, `nginx error log:\n${nginx.errorLog()}`).toBe(status);
}

describe('a request nginx lets through', () => {
  it('reaches the upstream with the verified tenant and user id', async () => {
    const res = await throughNginx('/orders/tenants/acme/items?page=2', {
      headers: { authorization: bearer(alice.access_token) },
    });
    expectStatus(res, 200);
    const echoed = (await res.json()) as { url: string; headers: IncomingHttpHeaders };
    expect(echoed.url).toBe('/orders/tenants/acme/items?page=2');
    expect(echoed.headers['x-tenant-id']).toBe('acme');
    expect(echoed.headers['x-user-id']).toBe(alice.user_id);
    expect(upstream.seen).toHaveLength(1);
  });

  it("replaces a client's spoofed identity headers with the verified ones", async () => {
    const res = await throughNginx('/orders/tenants/acme/items', {
      method: 'POST',
      headers: {
        authorization: bearer(alice.access_token),
        'x-tenant-id': 'globex',
        'x-user-id': 'someone-else',
        'x-tenant-type': 'usertenant',
        'x-user-email': 'mallory@example.com',
        'content-type': 'application/json',
      },
      body: '{"qty":1}',
    });
    expectStatus(res, 200);
    const echoed = (await res.json()) as { method: string; headers: IncomingHttpHeaders };
    expect(echoed.method).toBe('POST');
    expect(echoed.headers['x-tenant-id']).toBe('acme');
    expect(echoed.headers['x-user-id']).toBe(alice.user_id);
    expect(echoed.headers['x-tenant-type']).toBe('orgtenant');
    expect(echoed.headers['x-user-email']).toBe(ALICE.email);
    expect(upstream.seen).toHaveLength(1);
  });
});

describe('a request nginx refuses on the gateway’s verdict', () => {
  it('no token: 401 with the bearer challenge, upstream never called', async () => {
    const res = await throughNginx('/orders/tenants/acme/items');
    expectStatus(res, 401);
    // auth_request passes the subrequest's WWW-Authenticate on to the client.
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="tenant-gateway"');
    await res.arrayBuffer();
    expect(upstream.seen).toHaveLength(0);
  });

  it('a token that is not a JWT: 401, upstream never called', async () => {
    const res = await throughNginx('/orders/tenants/acme/items', {
      headers: { authorization: bearer('not-a-jwt') },
    });
    expectStatus(res, 401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    await res.arrayBuffer();
    expect(upstream.seen).toHaveLength(0);
  });

  it('another tenant in the path: 403, upstream never called', async () => {
    const res = await throughNginx('/orders/tenants/globex/items', {
      headers: { authorization: bearer(alice.access_token) },
    });
    expectStatus(res, 403);
    await res.arrayBuffer();
    expect(upstream.seen).toHaveLength(0);
  });

  it('another tenant reached by dot segments: 403, upstream never called', async () => {
    const res = await rawGet('/orders/tenants/acme/../../../orders/tenants/globex/items', {
      authorization: bearer(alice.access_token),
    });
    expectStatus(res, 403);
    expect(upstream.seen).toHaveLength(0);
  });

  it('dot segments leading back into its own tenant are let through', async () => {
    const res = await rawGet('/orders/tenants/globex/../../../orders/tenants/acme/items', {
      authorization: bearer(alice.access_token),
    });
    expectStatus(res, 200);
    expect(upstream.seen.map((r) => r.headers['x-tenant-id'])).toEqual(['acme']);
  });
});

describe('routes that name hosts, behind nginx', () => {
  it("the original Host selects the route: admin.example.com's rules apply only there", async () => {
    const auth = { authorization: bearer(alice.access_token) };
    const admin = await rawGet('/admin/x', { ...auth, host: 'admin.example.com' });
    expectStatus(admin, 403);
    expect(upstream.seen).toHaveLength(0);
    // Elsewhere /admin is under no route: the token alone decides.
    expectStatus(await rawGet('/admin/x', { ...auth, host: 'www.example.com' }), 200);
    expect(upstream.seen.map((r) => r.headers['x-tenant-id'])).toEqual(['acme']);
  });

  it("a client's X-Forwarded-Host naming another host is not believed", async () => {
    const res = await rawGet('/admin/x', {
      authorization: bearer(alice.access_token),
      host: 'admin.example.com',
      'x-forwarded-host': 'www.example.com',
    });
    expectStatus(res, 403);
    expect(upstream.seen).toHaveLength(0);
  });
});

describe('forward-auth headers a client adds are not believed', () => {
  // nginx passes the client's headers on to the auth subrequest; it sets only
  // X-Original-URI and X-Original-Method. A client-chosen X-Original-URL (or
  // X-Forwarded-Uri) naming its own tenant must not decide the verdict for a
  // request to another tenant's path.
  it.each([
    ['X-Original-URL', 'http://127.0.0.1/orders/tenants/acme/items'],
    ['X-Forwarded-Uri', '/orders/tenants/acme/items'],
  ])(
    'client sends %s naming acme on a request to globex: 403, upstream never called',
    async (name, value) => {
      const res = await throughNginx('/orders/tenants/globex/items', {
        headers: { authorization: bearer(alice.access_token), [name]: value },
      });
      expectStatus(res, 403);
      await res.arrayBuffer();
      expect(upstream.seen).toHaveLength(0);
    },
  );
});

/**
 * One GET over node:http: fetch resolves `..` (and `%2e%2e`) before sending,
 * so a path with dot segments has to go out this way to reach nginx as written.
 */
function rawGet(
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: nginx.port, path, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.once('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.once('error', reject);
    req.end();
  });
}

async function startEchoUpstream(): Promise<EchoUpstream> {
  const seen: EchoUpstream['seen'] = [];
  const server = createServer((req, res) => {
    const entry = { method: req.method ?? '', url: req.url ?? '', headers: req.headers };
    seen.push(entry);
    req.resume();
    req.once('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(entry));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, seen };
}
