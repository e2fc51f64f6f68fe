/**
 * Issue 34, part 2: the token exchange (RFC 8693) of a tenant's identity
 * provider's ID token, against `oidc-provider` (OpenID-certified) started
 * here over HTTPS as the IdPs of two tenants, acme (RS256) and globex (ES256),
 * each with keys and accounts of its own; ID tokens come from the providers'
 * own authorization code flow. Then the hostile cases: another tenant, another
 * client's `aud`, an unverified or foreign e-mail, look-alike issuers, `none`
 * and HS256 with the public key, another provider's key, an expired token; the
 * provider unreachable (503, proxied traffic unaffected; its failure cached
 * `sso.failureCacheSeconds`) and its keys rotated during traffic (one
 * refetch). The providers are on loopback: `sso.allowPrivateIssuers`.
 */
import { createPublicKey } from 'node:crypto';
import { SignJWT, importJWK, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../support/expect-error.js';
import { basic, bearer, bearerJson } from '../support/gateway.js';
import {
  ALICE,
  startMemoryIdentityFixture,
  tokenFor,
  type IdentityFixture,
} from '../support/identity-fixture.js';
import { scrape, total } from '../support/prometheus-text.js';
import { startEchoUpstream, type CountingUpstream } from '../support/upstream.js';
import { verifyDomains } from '../support/verified-domains.js';
import {
  ACME_CLIENT,
  EXCHANGE,
  GLOBEX_CLIENT,
  exchangeAt,
  storeTenantIdp,
} from '../support/token-exchange.js';
import { refreshAt, signUp } from '../support/account-requests.js';
import { loopbackSso, useTestIdps } from '../support/test-idps.js';

const OTHER_CLIENT = { clientId: 'acme-wiki', clientSecret: 'wiki-secret-0123456789abcdef' };

let fx: IdentityFixture;
let upstream: CountingUpstream;

const idps = useTestIdps({
  acme: {
    alg: 'RS256',
    clients: [ACME_CLIENT, OTHER_CLIENT],
    accounts: {
      ann: 'Ann@Acme.test',
      una: { email: 'una@acme.test', emailVerified: false },
      eve: 'eve@sub.acme.test',
      alice: ALICE.email,
      carl: 'carl@acme.test',
      gus: 'gus@globex.test',
    },
  },
  globex: {
    alg: 'ES256',
    clients: [GLOBEX_CLIENT],
    accounts: { gus: 'gus@globex.test' },
  },
});

beforeAll(async () => {
  upstream = await startEchoUpstream();
  fx = await startMemoryIdentityFixture({
    sso: loopbackSso(idps.ca, { unknownKeyCooldownSeconds: 1, failureCacheSeconds: 1 }),
    routes: [{ prefix: '/orders', upstream: upstream.url }],
    // Some fifty exchanges from one address within a minute.
    limits: { exchange: { perIp: 10_000, windowSeconds: 60 } },
  });
  // Acme's admin sets acme's IdP through the API; globex's is written to the store directly.
  await verifyDomains(fx.gw.gateway.store, 'acme', ['acme.test', 'example.com']);
  const admin = await tokenFor(fx.gw.url, ALICE, 'acme');
  const put = await bearerJson(fx.gw.url, 'PUT', '/1/tenants/acme/idp', admin.access_token, {
    issuer: idps.acme.issuer,
    client_id: ACME_CLIENT.clientId,
    domains: ['acme.test', 'example.com'],
  });
  expect(put.status).toBe(201);
  await storeTenantIdp(fx.gw.gateway.store, {
    tenantId: 'globex',
    issuer: idps.globex.issuer,
    clientId: GLOBEX_CLIENT.clientId,
    domains: ['globex.test'],
  });
}, 60_000);

afterAll(async () => {
  await fx?.close();
  await upstream?.close();
});

function exchange(subjectToken: string, tenantId: string, extra: Record<string, string> = {}) {
  return exchangeAt(fx.gw.url, subjectToken, tenantId, extra);
}

interface ExchangeAnswer {
  access_token: string;
  issued_token_type: string;
  token_type: string;
  expires_in: number;
  scope: string;
  tenant_id: string;
}

async function exchanged(subjectToken: string, tenantId: string): Promise<ExchangeAnswer> {
  const res = await exchange(subjectToken, tenantId);
  const text = await res.text();
  expect({ status: res.status, text }).toMatchObject({ status: 200 });
  expect(res.headers.get('cache-control')).toBe('no-store');
  return JSON.parse(text) as ExchangeAnswer;
}

async function refusedGrant(res: Response): Promise<void> {
  const body = await expectError(res, 400, 'invalid_grant');
  // One description for every refusal: no oracle for which check failed.
  expect(body.error_description).toBe('The subject token is not accepted for this tenant.');
}

async function outcomes(): Promise<(outcome: string) => number> {
  const samples = await scrape(fx.gw.adminUrl as string);
  return (outcome) => total(samples, 'tenant_gateway_federated_sign_ins_total', { outcome });
}

/** The claims of an ID token acme's provider would issue for ann, valid for five minutes from now. */
function annClaims(): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000);
  return {
    sub: 'ann',
    email: 'ann@acme.test',
    email_verified: true,
    iss: idps.acme.issuer,
    aud: ACME_CLIENT.clientId,
    iat: now,
    exp: now + 300,
  };
}

/** A token signed with `key` (a provider's private JWK) with the claims an ID token of acme's would have. */
async function forged(
  key: JWK,
  claims: Record<string, unknown>,
  header: Record<string, unknown> = {},
) {
  const alg = key.kty === 'RSA' ? 'RS256' : 'ES256';
  return new SignJWT({
    ...annClaims(),
    ...claims,
  })
    .setProtectedHeader({ alg, kid: key.kid as string, ...header })
    .sign(await importJWK(key, alg));
}

describe('token exchange with a tenant identity provider', () => {
  it('gives a new user of acme a gateway token for acme, created without a password and a member', async () => {
    const before = await outcomes();
    const answer = await exchanged(await idps.acme.idToken('ann'), 'acme');
    expect(answer).toMatchObject({
      issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      token_type: 'Bearer',
      tenant_id: 'acme',
      expires_in: 600,
    });
    const tenant = await fetch(`${fx.gw.url}/1/tenants/acme`, {
      headers: { authorization: bearer(answer.access_token) },
    });
    expect(tenant.status).toBe(200);
    const proxied = await fetch(`${fx.gw.url}/orders/1`, {
      headers: { authorization: bearer(answer.access_token) },
    });
    expect(proxied.status).toBe(200);
    const seen = (await proxied.json()) as { headers: Record<string, string> };
    expect(seen.headers['x-user-email']).toBe('ann@acme.test');
    expect(seen.headers['x-tenant-id']).toBe('acme');
    // No password opens the account; the tenants it has are its own and acme.
    const login = await fetch(`${fx.gw.url}/1/token?tenant_id=acme`, {
      headers: { authorization: basic('ann@acme.test', '*') },
    });
    expect(login.status).toBe(401);
    const user = await fx.gw.gateway.store.users.findUserByEmail('ann@acme.test');
    expect(user?.createdByIdp).toEqual({ tenantId: 'acme', issuer: idps.acme.issuer });
    expect(await fx.gw.gateway.store.memberships.getMemberRole('acme', user?.id as string)).toBe(
      'member',
    );
    const after = await outcomes();
    expect(after('user_created') - before('user_created')).toBe(1);
    // Again: signed in as the member they now are.
    await exchanged(await idps.acme.idToken('ann'), 'acme');
    expect((await outcomes())('signed_in') - after('signed_in')).toBe(1);
  });

  it('is not offered without sso.enabled', async () => {
    const plain = await startMemoryIdentityFixture();
    try {
      const res = await exchangeAt(plain.gw.url, await idps.acme.idToken('ann'), 'acme');
      await expectError(res, 400, 'unsupported_grant_type');
    } finally {
      await plain.close();
    }
  });

  it('begins a refresh family with tokens.refresh.enabled (as a Basic login does), and only then', async () => {
    const plain = await exchange(await idps.acme.idToken('alice'), 'acme');
    expect(((await plain.json()) as Record<string, unknown>).refresh_token).toBeUndefined();
    const withRefresh = await startMemoryIdentityFixture({
      sso: loopbackSso(idps.ca),
      tokens: { refresh: { enabled: true } },
    });
    try {
      await storeTenantIdp(withRefresh.gw.gateway.store, {
        tenantId: 'acme',
        issuer: idps.acme.issuer,
        clientId: ACME_CLIENT.clientId,
        domains: ['acme.test', 'example.com'],
      });
      const res = await exchangeAt(withRefresh.gw.url, await idps.acme.idToken('alice'), 'acme');
      expect(res.status).toBe(200);
      const answer = (await res.json()) as { refresh_token?: string; access_token: string };
      expect(answer.refresh_token).toMatch(/^tgr_/);
      const refreshed = await refreshAt(withRefresh.gw.url, answer.refresh_token as string);
      expect(refreshed.status).toBe(200);
      const next = (await refreshed.json()) as { refresh_token: string; tenant_id: string };
      expect(next.tenant_id).toBe('acme');
      expect(next.refresh_token).not.toBe(answer.refresh_token);
    } finally {
      await withRefresh.close();
    }
  });

  it('is listed in the RFC 8414 metadata', async () => {
    const res = await fetch(`${fx.gw.url}/.well-known/oauth-authorization-server`);
    const metadata = (await res.json()) as { grant_types_supported: string[] };
    expect(metadata.grant_types_supported).toContain(EXCHANGE);
  });

  it('signs an existing member in with their own role; globex works with its own provider', async () => {
    const alice = await exchanged(await idps.acme.idToken('alice'), 'acme');
    expect(alice.tenant_id).toBe('acme');
    const gus = await exchanged(await idps.globex.idToken('gus'), 'globex');
    expect(gus.tenant_id).toBe('globex');
  });

  it('joins a local user who is not a member only when the record links existing users, and their address is verified', async () => {
    // Signed up while acme.test was not verified: signup refuses a verified domain's address (issue 42).
    await fx.gw.gateway.store.domains.removeTenantDomain('acme', 'acme.test');
    const signup = await signUp(fx.gw.url, {
      email: 'carl@acme.test',
      password: 'carl-password-1',
    });
    await verifyDomains(fx.gw.gateway.store, 'acme', ['acme.test']);
    expect(signup.status).toBe(201);
    const token = await idps.acme.idToken('carl');
    await refusedGrant(await exchange(token, 'acme'));
    const store = fx.gw.gateway.store;
    const record = await store.idps.getTenantIdp('acme');
    await store.idps.setTenantIdp({
      ...(record as NonNullable<typeof record>),
      linkExisting: true,
    });
    try {
      // Issue 45: anyone may sign up as carl@acme.test; an address nobody proved is never linked.
      const unverified = await outcomes();
      await refusedGrant(await exchange(token, 'acme'));
      expect((await outcomes())('not_linked') - unverified('not_linked')).toBe(1);
      const { user_id: carlId } = (await signup.json()) as { user_id: string };
      await store.users.markEmailVerified(carlId, Math.floor(Date.now() / 1000));
      const before = await outcomes();
      await exchanged(token, 'acme');
      expect((await outcomes())('member_joined') - before('member_joined')).toBe(1);
      // The link is audited as one: a local account now reachable through the provider.
      const joined = (
        await fx.gw.gateway.store.auditLog({ maxEventsPerStream: 10_000 }).read('tenant:acme', 0)
      )
        .map((e) => JSON.parse(e.event) as Record<string, unknown>)
        .filter((e) => e.event === 'federated_member_joined' && e.user_email === 'carl@acme.test');
      expect(joined).toEqual([
        expect.objectContaining({ linked: true, password_ended: true, role: 'member' }),
      ]);
    } finally {
      await store.idps.setTenantIdp(record as NonNullable<typeof record>);
    }
  });

  it('refuses a disabled user', async () => {
    const store = fx.gw.gateway.store;
    const user = await store.users.findUserByEmail('ann@acme.test');
    const hash = user?.passwordHash as string;
    await store.users.setPasswordHash(user?.id as string, `!${hash}`);
    try {
      await refusedGrant(await exchange(await idps.acme.idToken('ann'), 'acme'));
    } finally {
      await store.users.setPasswordHash(user?.id as string, hash);
    }
  });
});

describe('hostile subject tokens', () => {
  it("never turns acme's provider's token into a globex token, whatever its e-mail", async () => {
    const before = await outcomes();
    await refusedGrant(await exchange(await idps.acme.idToken('gus'), 'globex'));
    await refusedGrant(await exchange(await idps.acme.idToken('ann'), 'globex'));
    expect((await outcomes())('foreign_issuer') - before('foreign_issuer')).toBe(2);
  });

  it('refuses a token issued to another client of the provider (aud)', async () => {
    await refusedGrant(await exchange(await idps.acme.idToken('ann', OTHER_CLIENT), 'acme'));
    const key = idps.acme.keys[0] as JWK;
    const several = await forged(key, { aud: [OTHER_CLIENT.clientId, ACME_CLIENT.clientId] });
    await refusedGrant(await exchange(several, 'acme'));
    const otherAzp = await forged(key, { azp: OTHER_CLIENT.clientId });
    await refusedGrant(await exchange(otherAzp, 'acme'));
  });

  it('refuses an e-mail the provider has not verified, and one outside the domains', async () => {
    const before = await outcomes();
    await refusedGrant(await exchange(await idps.acme.idToken('una'), 'acme'));
    await refusedGrant(await exchange(await idps.acme.idToken('eve'), 'acme'));
    const after = await outcomes();
    expect(after('email_not_verified') - before('email_not_verified')).toBe(1);
    expect(after('domain_not_allowed') - before('domain_not_allowed')).toBe(1);
    expect(await fx.gw.gateway.store.users.findUserByEmail('una@acme.test')).toBeNull();
  });

  it("takes Entra ID's xms_edov only from a token without email_verified", async () => {
    const key = idps.acme.keys[0] as JWK;
    const entra = await forged(key, { email_verified: undefined, xms_edov: true });
    expect((await exchange(entra, 'acme')).status).toBe(200);
    const both = await forged(key, { email_verified: false, xms_edov: true });
    await refusedGrant(await exchange(both, 'acme'));
    const neither = await forged(key, { email_verified: undefined });
    await refusedGrant(await exchange(neither, 'acme'));
    const text = await forged(key, { email_verified: 'true' });
    await refusedGrant(await exchange(text, 'acme'));
  });

  it('treats an issuer that differs in a trailing slash or letter case as unknown', async () => {
    const key = idps.acme.keys[0] as JWK;
    const jwksBefore = idps.acme.requests.get('/jwks') ?? 0;
    const before = await outcomes();
    for (const iss of [`${idps.acme.issuer}/`, idps.acme.issuer.replace('localhost', 'LOCALHOST')])
      await refusedGrant(await exchange(await forged(key, { iss }), 'acme'));
    expect((await outcomes())('unknown_issuer') - before('unknown_issuer')).toBe(2);
    expect(idps.acme.requests.get('/jwks') ?? 0).toBe(jwksBefore);
  });

  it('refuses alg none and HS256 keyed with the provider’s public key, without fetching keys', async () => {
    const key = idps.acme.keys[0] as JWK;
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const claims = annClaims();
    const none = `${b64({ alg: 'none', kid: key.kid })}.${b64(claims)}.`;
    const publicPem = createPublicKey({ key: key as never, format: 'jwk' })
      .export({ type: 'spki', format: 'pem' })
      .toString();
    const hs256 = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', kid: key.kid as string })
      .sign(Buffer.from(publicPem));
    const jwksBefore = idps.acme.requests.get('/jwks') ?? 0;
    const before = await outcomes();
    await refusedGrant(await exchange(none, 'acme'));
    await refusedGrant(await exchange(hs256, 'acme'));
    // An access token of the provider (RFC 9068) is not an ID token, whatever its claims.
    await refusedGrant(await exchange(await forged(key, {}, { typ: 'at+jwt' }), 'acme'));
    expect((await outcomes())('algorithm') - before('algorithm')).toBe(3);
    expect(idps.acme.requests.get('/jwks') ?? 0).toBe(jwksBefore);
  });

  it("refuses a token signed with globex's provider's key claiming acme's issuer", async () => {
    const globexKey = idps.globex.keys[0] as JWK;
    const acmeKid = (idps.acme.keys[0] as JWK).kid as string;
    // Its own kid: acme's set has no such key. Acme's kid: the signature fails.
    await refusedGrant(await exchange(await forged(globexKey, {}), 'acme'));
    const before = await outcomes();
    await refusedGrant(await exchange(await forged(globexKey, {}, { kid: acmeKid }), 'acme'));
    const after = await outcomes();
    expect(after('unknown_key') + after('bad_signature')).toBeGreaterThan(
      before('unknown_key') + before('bad_signature'),
    );
  });

  it('refuses an expired token, and one altered after signing', async () => {
    const key = idps.acme.keys[0] as JWK;
    const now = Math.floor(Date.now() / 1000);
    await refusedGrant(
      await exchange(await forged(key, { iat: now - 7200, exp: now - 3600 }), 'acme'),
    );
    // Issued in the future, or more than a day ago (whatever its exp).
    await refusedGrant(await exchange(await forged(key, { iat: now + 3600 }), 'acme'));
    await refusedGrant(
      await exchange(await forged(key, { iat: now - 2 * 86_400, exp: now + 3600 }), 'acme'),
    );
    const [h, p, s] = (await forged(key, {})).split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>;
    const altered = Buffer.from(JSON.stringify({ ...claims, email: 'boss@acme.test' })).toString(
      'base64url',
    );
    await refusedGrant(await exchange(`${h}.${altered}.${s}`, 'acme'));
  });

  it('refuses a tenant without a provider, and malformed requests', async () => {
    const token = await idps.acme.idToken('ann');
    await refusedGrant(await exchange(token, 'no-such-tenant'));
    await refusedGrant(await exchange('not-a-jwt', 'acme'));
    await expectError(
      await exchange(token, 'acme', { subject_token_type: 'urn:ietf:params:oauth:token-type:jwt' }),
      400,
      'invalid_request',
    );
    await expectError(await exchange(token, ''), 400, 'invalid_request');
  });
});

describe('the provider at work', () => {
  it('rotates its keys during traffic: a new kid refetches the key set once', async () => {
    const old = await idps.acme.idToken('ann');
    await exchanged(old, 'acme');
    await idps.acme.rotate();
    // Past the cooldown since the last fetch (sso.unknownKeyCooldownSeconds: 1).
    await new Promise((r) => setTimeout(r, 1100));
    const fresh = await idps.acme.idToken('ann');
    const jwksBefore = idps.acme.requests.get('/jwks') ?? 0;
    const answers = await Promise.all(
      [fresh, fresh, fresh, old, fresh].map((t) => exchange(t, 'acme')),
    );
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect((idps.acme.requests.get('/jwks') ?? 0) - jwksBefore).toBe(1);
    // A made-up kid right after: no second fetch within the cooldown.
    const madeUp = await forged(idps.acme.keys[0] as JWK, {}, { kid: 'made-up' });
    await refusedGrant(await exchange(madeUp, 'acme'));
    expect((idps.acme.requests.get('/jwks') ?? 0) - jwksBefore).toBe(1);
  });

  it('answers 503 while a provider cannot be reached, and proxied traffic goes on', async () => {
    const member = await exchanged(await idps.acme.idToken('alice'), 'acme');
    const another = await fx.startAnother();
    try {
      await storeTenantIdp(another.gateway.store, {
        tenantId: 'globex',
        issuer: idps.globex.issuer,
        clientId: GLOBEX_CLIENT.clientId,
        domains: ['globex.test'],
      });
      const token = await idps.globex.idToken('gus');
      await idps.globex.stop();
      // A gateway that has not fetched globex's keys yet.
      await expectError(await exchangeAt(another.url, token, 'globex'), 503, 'unavailable');
      const proxied = await fetch(`${fx.gw.url}/orders/2`, {
        headers: { authorization: bearer(member.access_token) },
      });
      expect(proxied.status).toBe(200);
      await idps.globex.start();
      // The failure is remembered (sso.failureCacheSeconds: 1): no request until it expires.
      const discoveries = idps.globex.requests.get('/.well-known/openid-configuration') ?? 0;
      await expectError(await exchangeAt(another.url, token, 'globex'), 503, 'unavailable');
      expect(idps.globex.requests.get('/.well-known/openid-configuration') ?? 0).toBe(discoveries);
      await new Promise((r) => setTimeout(r, 1100));
      const res = await exchangeAt(another.url, token, 'globex');
      expect(res.status).toBe(200);
    } finally {
      if (!idps.globex.listening()) await idps.globex.start();
      await another.close();
    }
  });
});
