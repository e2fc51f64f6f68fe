/**
 * DESIGN §2 steps 1–3 end to end: a real gateway on the in-memory store in
 * front of a real loopback upstream that reports what it received. Every rule
 * has a passing request and a refused one.
 */
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic, bearer, startTestGateway } from '../support/gateway.js';
import {
  expectBearerChallenge,
  expectError,
  NO_CREDENTIALS_CHALLENGE,
} from '../support/expect-error.js';
import { ALICE, tokenFor, type IdentityFixture } from '../support/identity-fixture.js';
import { startSignedInFixture, type SignedIn } from '../support/signed-in-fixture.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

let upstream: Server;
let upstreamUrl: string;
const seen: Seen[] = [];
let fx: IdentityFixture;
let url: string;
let aliceAcme: string;
let aliceId: string;
/** Bob's token for globex. */
let bob: SignedIn;

beforeAll(async () => {
  upstream = createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    req.resume();
    req.on('end', () => {
      res.setHeader('x-upstream', 'yes');
      res.setHeader('set-cookie', ['a=1; Path=/', 'b=2; Path=/']);
      res.end(JSON.stringify({ ok: true }));
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  const signedIn = await startSignedInFixture({
    trustedProxies: ['10.0.0.0/8'],
    routes: [
      {
        prefix: '/orders',
        upstream: upstreamUrl,
        tenant: {
          header: 'X-Tenant-Id',
          path: '/orders/tenants/:tenant_id',
          query: 'tenant_id',
          host: ':tenant_id.api.example.com',
        },
      },
      { prefix: '/orders/public', upstream: `${upstreamUrl}/base` },
      { prefix: '/plain', upstream: upstreamUrl, stripAuthorization: false },
    ],
  });
  ({ fx, bob } = signedIn);
  url = fx.gw.url;
  aliceAcme = signedIn.alice.access_token;
  aliceId = signedIn.alice.user_id;
});
afterAll(async () => {
  await fx.close();
  await new Promise((r) => upstream.close(r));
});

/** A request through the gateway; returns the response and what the upstream saw (if anything). */
async function through(
  path: string,
  headers: Record<string, string | string[]> = {},
  method = 'GET',
) {
  const before = seen.length;
  const res = await new Promise<{ status: number; headers: IncomingHttpHeaders; body: string }>(
    (resolve, reject) => {
      const req = request(`${url}${path}`, { method, headers }, (r) => {
        let body = '';
        r.setEncoding('utf8');
        r.on('data', (c: string) => (body += c));
        r.on('end', () => resolve({ status: r.statusCode ?? 0, headers: r.headers, body }));
      });
      req.on('error', reject);
      req.end();
    },
  );
  return { res, upstream: seen.length > before ? seen[seen.length - 1] : undefined };
}

const auth = () => ({ authorization: bearer(aliceAcme) });

describe('step 1: bearer verification', () => {
  it('forwards a request with a valid token', async () => {
    const { res, upstream: got } = await through('/orders/1', auth());
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ ok: true });
    expect(got?.url).toBe('/orders/1');
  });

  it('refuses a missing, a Basic or a revoked token with 401 and never calls the upstream', async () => {
    for (const headers of [{}, { authorization: basic(ALICE.email, ALICE.password) }] as Record<
      string,
      string
    >[]) {
      const { res, upstream: got } = await through('/orders/1', headers);
      expect(res.status).toBe(401);
      // No bearer credentials: the challenge names no error (RFC 6750 §3.1).
      expect(res.headers['www-authenticate']).toBe(NO_CREDENTIALS_CHALLENGE);
      expect(JSON.parse(res.body).error).toBe('invalid_token');
      expect(got).toBeUndefined();
    }
    const doomed = await tokenFor(url, ALICE, 'acme');
    await fetch(`${url}/1/token`, {
      method: 'DELETE',
      headers: { authorization: bearer(doomed.access_token) },
    });
    const res = await fetch(`${url}/orders/1`, {
      headers: { authorization: bearer(doomed.access_token) },
    });
    await expectError(res, 401, 'invalid_token');
    expectBearerChallenge(res);
  });

  it('no route → 404 not_found even with a valid token', async () => {
    const { res, upstream: got } = await through('/nowhere', auth());
    expect(res.status).toBe(404);
    expect(JSON.parse(res.body).error).toBe('not_found');
    expect(got).toBeUndefined();
  });
});

describe('step 2: tenant matching', () => {
  it.each([
    ['header', '/orders/1', { 'x-tenant-id': 'acme' }],
    ['path', '/orders/tenants/acme/items', {}],
    ['query', '/orders/1?tenant_id=acme', {}],
    ['host', '/orders/1', { host: 'acme.api.example.com' }],
    [
      'all four at once',
      '/orders/tenants/acme?tenant_id=acme',
      { 'x-tenant-id': 'acme', host: 'ACME.api.example.com:8443' },
    ],
    ['no place at all', '/orders/1', {}],
  ])("the token's tenant named by %s → forwarded", async (_case, path, headers) => {
    const { res, upstream: got } = await through(path, { ...auth(), ...headers });
    expect(res.status).toBe(200);
    expect(got?.headers['x-tenant-id']).toBe('acme');
  });

  it.each([
    ['header', '/orders/1', { 'x-tenant-id': 'globex' }],
    ['header in another spelling', '/orders/1', { x_tenant_id: 'globex' }],
    ['path', '/orders/tenants/globex/items', {}],
    ['encoded path', '/orders/tenants/%67lobex', {}],
    ['path through dot segments', '/orders/tenants/acme/../globex', {}],
    ['query', '/orders/1?tenant_id=globex', {}],
    ['encoded query name', '/orders/1?tenant%5Fid=globex', {}],
    ['host', '/orders/1', { host: 'globex.api.example.com' }],
    ['one right place and one wrong', '/orders/tenants/acme?tenant_id=globex', {}],
    ['a repeated query parameter', '/orders/1?tenant_id=acme&tenant_id=globex', {}],
    ['the same query parameter twice', '/orders/1?tenant_id=acme&tenant_id=acme', {}],
    ['a header with two values', '/orders/1', { 'x-tenant-id': ['acme', 'globex'] }],
    ['the header twice, same value', '/orders/1', { 'x-tenant-id': ['acme', 'acme'] }],
    ['a comma list in one header', '/orders/1', { 'x-tenant-id': 'acme, globex' }],
    ['an empty query value', '/orders/1?tenant_id=', {}],
  ])(
    'another tenant named by %s → 403 tenant_mismatch, upstream never called',
    async (_case, path, headers) => {
      const { res, upstream: got } = await through(path, { ...auth(), ...headers });
      expect(res.status).toBe(403);
      expect(JSON.parse(res.body).error).toBe('tenant_mismatch');
      expect(got).toBeUndefined();
    },
  );

  it("Bob's globex token cannot read acme's path", async () => {
    const { res } = await through('/orders/tenants/acme', {
      authorization: bearer(bob.access_token),
    });
    expect(res.status).toBe(403);
  });
});

describe('step 3: header policy', () => {
  it('strips spoofed identity headers in any case and spelling, and injects the verified ones', async () => {
    const { res, upstream: got } = await through('/orders/public/x', {
      ...auth(),
      'X-User-Id': 'admin',
      'x-user-email': 'root@evil.example',
      'X-TENANT-TYPE': 'orgtenant-admin',
      x_user_id: 'admin2',
      X_Tenant_Id: 'globex',
    });
    expect(res.status).toBe(200);
    const h = got!.headers;
    expect(h['x-user-id']).toBe(aliceId);
    expect(h['x-user-email']).toBe(ALICE.email);
    expect(h['x-tenant-id']).toBe('acme');
    expect(h['x-tenant-type']).toBe('orgtenant');
    expect(
      Object.keys(h).filter(
        (k) =>
          k.replace(/_/g, '-').startsWith('x-user-') ||
          k.replace(/_/g, '-').startsWith('x-tenant-'),
      ),
    ).toEqual(
      expect.arrayContaining(['x-user-id', 'x-user-email', 'x-tenant-id', 'x-tenant-type']),
    );
    expect(Object.keys(h).some((k) => k.includes('_'))).toBe(false);
  });

  it('a route without tenant rules still strips and injects, and prepends the upstream path', async () => {
    const { upstream: got } = await through('/orders/public/x?q=1', {
      ...auth(),
      'x-tenant-id': 'globex',
    });
    expect(got?.url).toBe('/base/orders/public/x?q=1');
    expect(got?.headers['x-tenant-id']).toBe('acme');
  });

  it('passes a sane X-Request-Id through, replaces an insane one, and echoes it', async () => {
    const given = await through('/orders/1', { ...auth(), 'x-request-id': 'abc-123' });
    expect(given.res.headers['x-request-id']).toBe('abc-123');
    expect(given.upstream?.headers['x-request-id']).toBe('abc-123');
    const made = await through('/orders/1', { ...auth(), 'x-request-id': 'no spaces allowed <>' });
    expect(made.res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(made.upstream?.headers['x-request-id']).toBe(made.res.headers['x-request-id']);
  });

  it('sets X-Forwarded-* from the connection and ignores an untrusted client’s own', async () => {
    const { upstream: got } = await through('/orders/1', {
      ...auth(),
      'x-forwarded-for': '6.6.6.6',
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'evil.example',
      forwarded: 'for=6.6.6.6',
      'x-real-ip': '6.6.6.6',
    });
    expect(got?.headers['x-forwarded-for']).toBe('127.0.0.1');
    expect(got?.headers['x-forwarded-proto']).toBe('http');
    expect(got?.headers['x-forwarded-host']).toBe(new URL(url).host);
    expect(got?.headers.forwarded).toBeUndefined();
    expect(got?.headers['x-real-ip']).toBeUndefined();
  });

  it('forward-auth headers a client sends carry no weight and do not reach the upstream', async () => {
    const { res, upstream: got } = await through('/orders/1', {
      ...auth(),
      'x-original-uri': '/orders/tenants/globex',
      'x-forwarded-uri': '/orders/tenants/globex',
      'x-original-method': 'DELETE',
    });
    expect(res.status).toBe(200);
    expect(got?.headers['x-original-uri']).toBeUndefined();
    expect(got?.headers['x-forwarded-uri']).toBeUndefined();
    expect(got?.headers['x-original-method']).toBeUndefined();
  });

  it('drops hop-by-hop headers and anything the client lists in Connection', async () => {
    const { upstream: got } = await through('/orders/1', {
      ...auth(),
      connection: 'keep-alive, x-secret-hop',
      'x-secret-hop': '1',
      'proxy-authorization': 'Basic eA==',
      te: 'trailers',
    });
    expect(got?.headers['x-secret-hop']).toBeUndefined();
    expect(got?.headers['proxy-authorization']).toBeUndefined();
    expect(got?.headers.te).toBeUndefined();
  });

  it('strips Authorization by default (fail closed: no replayable token upstream) and keeps it where the route asks', async () => {
    const stripped = await through('/orders/1', auth());
    expect(stripped.res.status).toBe(200);
    expect(stripped.upstream?.headers.authorization).toBeUndefined();
    expect(stripped.upstream?.headers['x-user-id']).toBe(aliceId);
    const kept = await through('/plain/1', auth());
    expect(kept.upstream?.headers.authorization).toBe(bearer(aliceAcme));
  });

  it('passes response headers back untouched', async () => {
    const { res } = await through('/orders/1', auth());
    expect(res.headers['x-upstream']).toBe('yes');
    expect(res.headers['set-cookie']).toEqual(['a=1; Path=/', 'b=2; Path=/']);
  });
});

describe('path normalisation', () => {
  it('forwards the normalised path, so the upstream reads what was matched', async () => {
    const { res, upstream: got } = await through('/orders//x/./y/../z', auth());
    expect(res.status).toBe(200);
    expect(got?.url).toBe('/orders/x/z');
  });

  it.each(['/orders/%2e%2e/admin', '/public/../admin', '/orders/..%2fadmin', '/orders/%2fadmin'])(
    '%s never reaches a route it could not reach in plain form',
    async (path) => {
      const { res, upstream: got } = await through(path, auth());
      expect([400, 404]).toContain(res.status);
      expect(got).toBeUndefined();
    },
  );

  it('an identity endpoint reached through dot segments is the identity endpoint', async () => {
    const res = await fetch(`${url}/orders/../1/tenants/current`, { headers: auth() });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { tenant_id: string }).tenant_id).toBe('acme');
  });
});

describe('trusted proxies', () => {
  it('believes X-Forwarded-* only from a configured CIDR (127.0.0.1 is not in 10.0.0.0/8)', async () => {
    const { upstream: got } = await through('/orders/1', {
      ...auth(),
      'x-forwarded-for': '10.1.1.1',
    });
    expect(got?.headers['x-forwarded-for']).toBe('127.0.0.1');
  });

  it('from a trusted peer, appends to X-Forwarded-For and keeps its proto and host', async () => {
    const trusting = await startTestGateway({ ...fx.config, trustedProxies: ['127.0.0.1/32'] });
    try {
      // A store of its own: a token of this gateway.
      const trustingToken = (await tokenFor(trusting.url, ALICE, 'acme')).access_token;
      const before = seen.length;
      const res = await fetch(`${trusting.url}/orders/1`, {
        headers: {
          authorization: bearer(trustingToken),
          'x-forwarded-for': '203.0.113.7',
          'x-forwarded-proto': 'https',
          'x-forwarded-host': 'shop.example',
        },
      });
      expect(res.status).toBe(200);
      const got = seen[before];
      expect(got?.headers['x-forwarded-for']).toBe('203.0.113.7, 127.0.0.1');
      expect(got?.headers['x-forwarded-proto']).toBe('https');
      expect(got?.headers['x-forwarded-host']).toBe('shop.example');
    } finally {
      await trusting.close();
    }
  });
});
