/**
 * Issue 42, finding 7: a tenant admin chooses the issuer, so what the gateway
 * fetches from is chosen by a tenant. Against running gateways and a real
 * HTTPS server on loopback (a test CA) that counts what it is asked:
 *
 * - an issuer on a loopback or other non-public address is refused when it
 *   is set (400), and accepted with `sso.allowPrivateIssuers`;
 * - a name that resolves to loopback (`localhost`: a public-looking name whose
 *   DNS answers a private address) is refused again at connect time, with no
 *   request made, for the exchange and the browser sign-in alike;
 * - a failing provider is asked once, however many exchanges arrive within
 *   `sso.failureCacheSeconds` (discovery, and the key set);
 * - `limits.exchange` per client IP: 429 with `Retry-After` on the exchange,
 *   the sign-in start and its callback;
 * - a discovery document whose `authorization_endpoint` is on another origin
 *   is refused: `/sso/login` answers 503, never a redirect there.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../support/expect-error.js';
import { bearer, startTestGateway, type TestGateway } from '../support/gateway.js';
import {
  ALICE,
  startMemoryIdentityFixture,
  tokenFor,
  type IdentityFixture,
} from '../support/identity-fixture.js';
import { makeTestCa, type TestCa } from '../support/oidc-idp.js';
import { verifyDomains } from '../support/verified-domains.js';
import { exchangeAt } from '../support/token-exchange.js';
import { loopbackSso } from '../support/test-idps.js';

const APP = 'https://app.example.test/signed-in';
const PKCE = `code_challenge=${'a'.repeat(43)}&code_challenge_method=S256`;

let ca: TestCa;
let server: Server;
/** `https://localhost:<port>`: the server's own name, resolving to 127.0.0.1. */
let base: string;
/** Requests by path. */
const hits = new Map<string, number>();
let signingKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
/** Allows private issuers (the provider is on loopback). */
let fx: IdentityFixture;
/** The defaults: no private issuers. */
let strict: TestGateway;
/** `limits.exchange.perIp: 3`. */
let limited: TestGateway;

/** What each issuer path's discovery document is. */
function discovery(name: string, issuer: string): unknown {
  const endpoints = {
    jwks_uri: `${issuer}/jwks`,
    token_endpoint: `${issuer}/token`,
    authorization_endpoint: `${issuer}/authorize`,
  };
  if (name === 'elsewhere')
    return { issuer, ...endpoints, authorization_endpoint: 'https://login.attacker.example/auth' };
  return { issuer, ...endpoints };
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  const path = req.url ?? '/';
  hits.set(path, (hits.get(path) ?? 0) + 1);
  const name = path.split('/')[1] ?? '';
  if (name === 'failing' || path === '/jwksfail/jwks') return void res.writeHead(500).end();
  if (path.endsWith('/.well-known/openid-configuration')) {
    const body = JSON.stringify(discovery(name, `${base}/${name}`));
    return void res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  }
  res.writeHead(404).end();
}

const discoveries = (name: string) => hits.get(`/${name}/.well-known/openid-configuration`) ?? 0;

beforeAll(async () => {
  ca = makeTestCa();
  server = createServer({ cert: ca.cert, key: ca.key }, handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `https://localhost:${(server.address() as AddressInfo).port}`;
  signingKey = (await generateKeyPair('ES256')).privateKey;
  fx = await startMemoryIdentityFixture({
    sso: loopbackSso(ca, { redirectUris: [APP] }),
    limits: { exchange: { perIp: 10_000, windowSeconds: 60 } },
  });
  // Each on a memory store of its own, seeded alike.
  strict = await startTestGateway({
    ...fx.config,
    sso: { enabled: true, ca: ca.caFile, redirectUris: [APP] },
  });
  limited = await startTestGateway({
    ...fx.config,
    limits: { exchange: { perIp: 3, windowSeconds: 600 } },
  });
  // Issue 42: an IdP names only domains its tenant has verified.
  for (const gw of [fx.gw, strict, limited])
    await verifyDomains(gw.gateway.store, 'acme', ['acme.test']);
}, 60_000);

afterAll(async () => {
  await Promise.all([fx?.close(), strict?.close(), limited?.close()]);
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  ca?.close();
});

/** An ID token naming `issuer` (what is checked before any fetch: its `iss` and `alg`). */
function idTokenOf(issuer: string): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ email: 'ann@acme.test', email_verified: true })
    .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
    .setIssuer(issuer)
    .setAudience('gw')
    .setSubject('ann')
    .setIssuedAt(now)
    .setExpirationTime(now + 300)
    .sign(signingKey);
}

const exchange = (gw: TestGateway, subjectToken: string, tenantId = 'acme') =>
  exchangeAt(gw.url, subjectToken, tenantId);

/** The tenant's IdP written to the store directly: as if it was set when its name resolved elsewhere. */
function setIdp(gw: TestGateway, tenantId: string, issuer: string) {
  return gw.gateway.store.idps.setTenantIdp({
    tenantId,
    issuer,
    clientId: 'gw',
    domains: ['acme.test'],
    role: 'member',
    linkExisting: false,
    updatedAt: Math.floor(Date.now() / 1000),
  });
}

function putIdp(gw: TestGateway, token: string, issuer: string) {
  return fetch(`${gw.url}/1/tenants/acme/idp`, {
    method: 'PUT',
    headers: { authorization: bearer(token), 'content-type': 'application/json' },
    body: JSON.stringify({ issuer, client_id: 'gw', domains: ['acme.test'] }),
  });
}

const login = (gw: TestGateway, tenantId = 'acme') =>
  fetch(
    `${gw.url}/1/tenants/${tenantId}/sso/login?redirect_uri=${encodeURIComponent(APP)}&${PKCE}`,
    { redirect: 'manual' },
  );

describe('an issuer on a non-public address', () => {
  it('is refused when set (400), and accepted with sso.allowPrivateIssuers', async () => {
    const admin = (await tokenFor(strict.url, ALICE, 'acme')).access_token;
    const port = new URL(base).port;
    for (const issuer of [
      `https://127.0.0.1:${port}/good`,
      `${base}/good`,
      `https://[::1]:${port}/good`,
      'https://169.254.169.254/latest',
      'https://10.0.0.7/realms/acme',
      'https://[::ffff:7f00:1]/x',
      // Other spellings of 127.0.0.1 (the URL parser's IPv4 forms).
      'https://2130706433/x',
      'https://0x7f.1/x',
    ]) {
      const body = await expectError(await putIdp(strict, admin, issuer), 400, 'invalid_request');
      expect(body.error_description, issuer).toMatch(/^Invalid issuer: it is not on a public/);
      // The answer does not say what the name resolved to.
      expect(body.error_description).not.toContain('127.0.0.1');
    }
    expect(await strict.gateway.store.idps.getTenantIdp('acme')).toBeNull();
    const allowed = (await tokenFor(fx.gw.url, ALICE, 'acme')).access_token;
    const res = await putIdp(fx.gw, allowed, `${base}/good`);
    expect(res.status).toBe(201);
    await fx.gw.gateway.store.idps.removeTenantIdp('acme');
  });

  it('is refused at connect time when its name resolves there (DNS rebinding): no request made', async () => {
    await setIdp(strict, 'acme', `${base}/rebound`);
    try {
      for (let i = 0; i < 3; i++)
        await expectError(
          await exchange(strict, await idTokenOf(`${base}/rebound`)),
          503,
          'unavailable',
        );
      const res = await login(strict);
      await expectError(res, 503, 'unavailable');
      expect(res.headers.get('location')).toBeNull();
      expect(discoveries('rebound')).toBe(0);
    } finally {
      await strict.gateway.store.idps.removeTenantIdp('acme');
    }
  });
});

describe('a failing provider', () => {
  it('is asked once by 20 exchanges within sso.failureCacheSeconds (discovery failing)', async () => {
    await setIdp(fx.gw, 'globex', `${base}/failing`);
    const token = await idTokenOf(`${base}/failing`);
    const before = discoveries('failing');
    for (let i = 0; i < 20; i++)
      await expectError(await exchange(fx.gw, token, 'globex'), 503, 'unavailable');
    expect(discoveries('failing') - before).toBe(1);
  });

  it('is asked once by 20 exchanges within sso.failureCacheSeconds (key set failing)', async () => {
    await setIdp(fx.gw, 'globex', `${base}/jwksfail`);
    const token = await idTokenOf(`${base}/jwksfail`);
    const before = hits.get('/jwksfail/jwks') ?? 0;
    for (let i = 0; i < 20; i++)
      await expectError(await exchange(fx.gw, token, 'globex'), 503, 'unavailable');
    expect(discoveries('jwksfail')).toBe(1);
    expect((hits.get('/jwksfail/jwks') ?? 0) - before).toBe(1);
  });
});

describe('limits.exchange', () => {
  it('answers 429 with Retry-After past its budget: the exchange, the sign-in and its callback', async () => {
    const token = await idTokenOf(`${base}/good`);
    // No IdP on this gateway: refused, but each one counted.
    for (let i = 0; i < 3; i++)
      await expectError(await exchange(limited, token), 400, 'invalid_grant');
    const answers = [
      await exchange(limited, token),
      await login(limited),
      await fetch(`${limited.url}/1/sso/callback?state=any&code=x`, { redirect: 'manual' }),
    ];
    for (const res of answers) {
      await expectError(res, 429, 'too_many_requests');
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(res.headers.get('location')).toBeNull();
    }
  });
});

describe("an authorization endpoint off the issuer's origin", () => {
  it('makes the provider refused: /sso/login answers 503, never a redirect there', async () => {
    await setIdp(fx.gw, 'acme', `${base}/elsewhere`);
    try {
      const res = await login(fx.gw);
      await expectError(res, 503, 'unavailable');
      expect(res.headers.get('location')).toBeNull();
      expect(res.headers.get('set-cookie')).toBeNull();
      // The exchange refuses the provider too.
      await expectError(
        await exchange(fx.gw, await idTokenOf(`${base}/elsewhere`)),
        503,
        'unavailable',
      );
    } finally {
      await fx.gw.gateway.store.idps.removeTenantIdp('acme');
    }
  });
});
