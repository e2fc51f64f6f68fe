/**
 * Forward-auth (DESIGN §1 `/auth/verify`, §2): for each way an ingress asks
 * about the original request, the verdict is the one the proxy would give —
 * 200 with the identity headers, or the proxy's 401/403 JSON — against a real
 * gateway on the in-memory store.
 *
 * Requests go out over node:http rather than fetch: fetch drops a `Host`
 * header and resolves `..` before sending, and both are what an ingress sends
 * as written.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic, bearer } from '../support/gateway.js';
import {
  expectBearerChallenge,
  expectError,
  expectNoCredentialsChallenge,
} from '../support/expect-error.js';
import { ALICE, BOB, tokenFor, type IdentityFixture } from '../support/identity-fixture.js';
import { startSignedInFixture, type SignedIn } from '../support/signed-in-fixture.js';

/** The request the client sent to the ingress. */
interface Original {
  method: string;
  /** Path and query, as the client wrote them. */
  target: string;
  host: string;
  /** The client's own headers, which the ingress passes on to forward-auth. */
  headers: Record<string, string>;
}

/** A request to the gateway: method, path and headers, sent as written. */
interface Outgoing {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

interface Ingress {
  name: string;
  /** The `/auth/verify` request this ingress sends for `original`. */
  ask(original: Original): Outgoing;
}

const INGRESSES: Ingress[] = [
  {
    // `proxy_set_header X-Original-URI $request_uri; ... Host $host;`
    name: 'nginx auth_request (X-Original-URI)',
    ask: (o) => ({
      method: 'GET',
      path: '/auth/verify',
      headers: {
        ...o.headers,
        host: o.host,
        'x-original-uri': o.target,
        'x-original-method': o.method,
      },
    }),
  },
  {
    name: 'ingress-nginx auth-url (X-Original-URL)',
    ask: (o) => ({
      method: 'GET',
      path: '/auth/verify',
      headers: {
        ...o.headers,
        'x-original-url': `https://${o.host}${o.target}`,
        'x-original-method': o.method,
      },
    }),
  },
  {
    name: 'Traefik ForwardAuth (X-Forwarded-Uri/Host/Method)',
    ask: (o) => ({
      method: 'GET',
      path: '/auth/verify',
      headers: {
        ...o.headers,
        'x-forwarded-method': o.method,
        'x-forwarded-proto': 'https',
        'x-forwarded-host': o.host,
        'x-forwarded-uri': o.target,
      },
    }),
  },
  {
    // ext_authz http_service with `path_prefix: /auth/verify`: the original
    // method, path and Host, under the prefix.
    name: 'Envoy ext_authz (path suffix + Host)',
    ask: (o) => ({
      method: o.method,
      path: `/auth/verify${o.target}`,
      headers: { ...o.headers, host: o.host },
    }),
  },
];

const ROUTES = [
  {
    prefix: '/orders',
    upstream: 'http://127.0.0.1:1',
    tenant: {
      header: 'X-Tenant-Id',
      path: '/orders/tenants/:tenant_id',
      query: 'tenant_id',
      host: ':tenant_id.api.example.com',
    },
  },
];

let fx: IdentityFixture;
let gatewayPort: number;
let alice: SignedIn;
let bob: SignedIn;

beforeAll(async () => {
  ({ fx, alice, bob } = await startSignedInFixture({ routes: ROUTES }));
  gatewayPort = Number(new URL(fx.gw.url).port);
});
afterAll(() => fx?.close());

/** An original request for acme that names acme in every place the route looks. */
function forAcme(authorization: string, change: Partial<Original> = {}): Original {
  return {
    method: 'GET',
    target: '/orders/tenants/acme/items?tenant_id=acme',
    host: 'acme.api.example.com',
    ...change,
    headers: { authorization, 'x-tenant-id': 'acme', ...change.headers },
  };
}

async function expectAdmitted(
  res: Response,
  who: { tenantId: string; tenantType: string; userId: string; email: string },
): Promise<void> {
  const body = await res.text();
  expect({ status: res.status, body }).toEqual({ status: 200, body: '' });
  expect({
    tenantId: res.headers.get('x-tenant-id'),
    tenantType: res.headers.get('x-tenant-type'),
    userId: res.headers.get('x-user-id'),
    email: res.headers.get('x-user-email'),
  }).toEqual(who);
  expect(res.headers.get('cache-control')).toBe('no-store');
}

const aliceInAcme = () => ({
  tenantId: 'acme',
  tenantType: 'orgtenant',
  userId: alice.user_id,
  email: ALICE.email,
});

describe.each(INGRESSES)('$name', (ingress) => {
  const verify = (original: Original, change: Partial<Outgoing> = {}) =>
    send({ ...ingress.ask(original), ...change });

  describe('a valid token for the tenant the request names', () => {
    it('200, empty body, the four identity headers and Cache-Control: no-store', async () => {
      await expectAdmitted(await verify(forAcme(bearer(alice.access_token))), aliceInAcme());
    });

    it("answers with the token's own identity (Bob in globex)", async () => {
      const original = forAcme(bearer(bob.access_token), {
        target: '/orders/tenants/globex/items?tenant_id=globex',
        host: 'globex.api.example.com',
        headers: { 'x-tenant-id': 'globex' },
      });
      await expectAdmitted(await verify(original), {
        tenantId: 'globex',
        tenantType: 'orgtenant',
        userId: bob.user_id,
        email: BOB.email,
      });
    });

    it.each(['POST', 'PUT', 'DELETE'])(
      'the same verdict when forward-auth is asked with %s',
      async (method) => {
        const allowed = await verify(forAcme(bearer(alice.access_token), { method }), {
          method,
          body: '{"qty":1}',
        });
        await expectAdmitted(allowed, aliceInAcme());
        const refused = forAcme(bearer(alice.access_token), {
          method,
          target: '/orders/tenants/globex/items',
        });
        await expectError(
          await verify(refused, { method, body: '{"qty":1}' }),
          403,
          'tenant_mismatch',
        );
      },
    );
  });

  describe('403 tenant_mismatch when another tenant is named', () => {
    const elsewhere: [string, Partial<Original>][] = [
      ['in the path', { target: '/orders/tenants/globex/items?tenant_id=acme' }],
      ['in the query', { target: '/orders/tenants/acme/items?tenant_id=globex' }],
      ['in the header', { headers: { 'x-tenant-id': 'globex' } }],
      ['in the host', { host: 'globex.api.example.com' }],
      [
        'twice in the query (ambiguous)',
        { target: '/orders/items?tenant_id=acme&tenant_id=globex' },
      ],
    ];
    it.each(elsewhere)('%s', async (_place, change) => {
      await expectError(
        await verify(forAcme(bearer(alice.access_token), change)),
        403,
        'tenant_mismatch',
      );
    });
  });

  describe('the original path is normalised before matching', () => {
    it.each([
      '/orders/tenants/acme/../globex/items',
      '/orders/tenants/acme/../../../orders/tenants/globex/items',
      '/orders/tenants/acme/%2e%2e/%2E%2E/%2e%2e/orders/tenants/globex',
      '//orders//tenants//globex//items',
      '/%6frders/tenants/%67lobex/items',
    ])('%s names globex: 403', async (target) => {
      const original = forAcme(bearer(alice.access_token), { target });
      await expectError(await verify(original), 403, 'tenant_mismatch');
    });

    it('dot segments leading back into the token tenant are admitted', async () => {
      const original = forAcme(bearer(alice.access_token), {
        target: '/orders/tenants/globex/../acme/items',
      });
      await expectAdmitted(await verify(original), aliceInAcme());
    });
  });

  describe('401 invalid_token with the bearer challenge', () => {
    it.each([
      ['no Authorization header', ''],
      ['Basic credentials instead of a bearer', basic(ALICE.email, ALICE.password)],
    ])('%s: the challenge names no error (RFC 6750 §3.1)', async (_case, authorization) => {
      const original = forAcme(authorization);
      if (authorization === '') delete original.headers['authorization'];
      const res = await verify(original);
      expectNoCredentialsChallenge(res);
      await expectError(res, 401, 'invalid_token');
    });

    it('a bearer that is not a JWT', async () => {
      const res = await verify(forAcme(bearer('not-a-jwt')));
      expectBearerChallenge(res);
      await expectError(res, 401, 'invalid_token');
    });

    it('a token revoked with DELETE /1/token', async () => {
      const { access_token } = await tokenFor(fx.gw.url, ALICE, 'acme');
      await expectAdmitted(await verify(forAcme(bearer(access_token))), aliceInAcme());
      const revoked = await fetch(`${fx.gw.url}/1/token`, {
        method: 'DELETE',
        headers: { authorization: bearer(access_token) },
      });
      expect(revoked.status).toBe(204);
      const res = await verify(forAcme(bearer(access_token)));
      expectBearerChallenge(res);
      await expectError(res, 401, 'invalid_token');
    });
  });

  describe('an original path that matches no route', () => {
    it('checks the token only: 200 whatever tenant the request names', async () => {
      const original = forAcme(bearer(alice.access_token), {
        target: '/reports/tenants/globex?tenant_id=globex',
        host: 'globex.api.example.com',
        headers: { 'x-tenant-id': 'globex' },
      });
      await expectAdmitted(await verify(original), aliceInAcme());
    });

    it('still refuses a missing token: 401', async () => {
      const original = forAcme('', { target: '/reports/daily' });
      delete original.headers['authorization'];
      await expectError(await verify(original), 401, 'invalid_token');
    });
  });
});

describe('original-request headers the ingress does not set are client-controlled', () => {
  // Traefik ForwardAuth copies every client header into the auth request
  // (unless `authRequestHeaders` is set); only X-Forwarded-* are its own. A
  // client's X-Original-URI / X-Original-URL must not override them.
  const traefik = INGRESSES.find((i) => i.name.startsWith('Traefik')) as Ingress;

  it.each([
    ['X-Original-URI', { 'x-original-uri': '/orders/tenants/acme/items' }],
    [
      'X-Original-URL',
      { 'x-original-url': 'https://acme.api.example.com/orders/tenants/acme/items' },
    ],
  ])(
    'Traefik, client adds %s naming its own tenant: still 403 for globex',
    async (_name, injected) => {
      const original = forAcme(bearer(alice.access_token), {
        target: '/orders/tenants/globex/items',
        host: 'acme.api.example.com',
        headers: injected,
      });
      await expectError(await send(traefik.ask(original)), 403, 'tenant_mismatch');
    },
  );
});

describe('an original request no plain form could have: 400 invalid_request, never a 500', () => {
  const headers = () => ({ authorization: bearer(alice.access_token) });
  it.each([
    [
      'X-Original-URL that does not parse',
      { 'x-original-url': 'http://[acme/orders/tenants/globex' },
    ],
    // The URL parser would turn `\` into `/`; X-Original-URI refuses it, so must X-Original-URL.
    [
      'X-Original-URL with a backslash',
      { 'x-original-url': 'http://acme.api.example.com/orders/tenants/globex\\..\\acme' },
    ],
    ['X-Original-URI with a backslash', { 'x-original-uri': '/orders/tenants/globex\\..\\acme' }],
    ['X-Original-URI that is not an absolute path', { 'x-original-uri': 'orders/tenants/globex' }],
    [
      'X-Original-URI with an encoded slash',
      { 'x-original-uri': '/orders/tenants/acme%2f..%2f..%2f..%2forders/tenants/globex' },
    ],
    ['X-Forwarded-Uri with a malformed escape', { 'x-forwarded-uri': '/orders/tenants/%zzacme' }],
    // nginx passes a raw byte on; an upstream decoding overlong UTF-8 reads C0 AE as ".".
    [
      'X-Original-URI with raw bytes outside ASCII',
      { 'x-original-uri': '/orders/tenants/acme/\u00c0\u00ae\u00c0\u00ae/globex' },
    ],
  ])('%s', async (_case, original) => {
    await expectError(
      await send({ method: 'GET', path: '/auth/verify', headers: { ...headers(), ...original } }),
      400,
      'invalid_request',
    );
  });
});

/** Sends `out` to the gateway as written and wraps the answer in a fetch Response. */
function send(out: Outgoing): Promise<Response> {
  return new Promise((resolve, reject) => {
    // An explicit length: without it node:http sends a DELETE body unframed.
    const length =
      out.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(out.body)) };
    const headers = { ...out.headers, ...length };
    const req = request(
      { host: '127.0.0.1', port: gatewayPort, method: out.method, path: out.path, headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.once('end', () => {
          const received = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            for (const v of Array.isArray(value) ? value : [value ?? '']) received.append(name, v);
          }
          const body = Buffer.concat(chunks);
          resolve(
            new Response(body.length === 0 ? null : body, {
              status: res.statusCode ?? 0,
              headers: received,
            }),
          );
        });
        res.once('error', reject);
      },
    );
    req.once('error', reject);
    req.end(out.body);
  });
}
