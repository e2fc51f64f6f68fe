/**
 * The token exchange on two instances sharing a Redis store: a user the
 * first creates at their first sign-in (no password, marked as the IdP's) is
 * read back from Redis by the second, which signs them in; removing the
 * membership on one ends the exchanged token on both, and the IdP's mark lets
 * the user join again at their next sign-in.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, type TestGateway } from '../support/gateway.js';
import { startIdentityFixture, type RedisIdentityFixture } from '../support/identity-fixture.js';
import { makeTestCa, startTestIdp, type TestCa, type TestIdp } from '../support/oidc-idp.js';
import { verifyDomains } from '../support/verified-domains.js';

const CLIENT = { clientId: 'gateway-acme', clientSecret: 'acme-secret-0123456789abcdef' };

let ca: TestCa;
let idp: TestIdp;
let fx: RedisIdentityFixture;
let second: TestGateway;

beforeAll(async () => {
  ca = makeTestCa();
  idp = await startTestIdp({
    ca,
    alg: 'ES256',
    clients: [CLIENT],
    accounts: { dana: { email: 'dana@acme.test', emailVerified: true } },
  });
  // The IdP is on loopback.
  fx = await startIdentityFixture({
    sso: { enabled: true, ca: ca.caFile, allowPrivateIssuers: true },
  });
  second = await fx.startAnother();
  await verifyDomains(fx.gw.gateway.store, 'acme', ['acme.test']);
  await fx.gw.gateway.store.idps.setTenantIdp({
    tenantId: 'acme',
    issuer: idp.issuer,
    clientId: CLIENT.clientId,
    domains: ['acme.test'],
    role: 'member',
    linkExisting: false,
    updatedAt: Math.floor(Date.now() / 1000),
  });
}, 60_000);

afterAll(async () => {
  await fx?.close();
  await idp?.close();
  ca?.close();
});

async function exchange(gw: TestGateway, subjectToken: string): Promise<Response> {
  return fetch(`${gw.url}/1/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token: subjectToken,
      subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
      tenant_id: 'acme',
    }),
  });
}

const tenantStatus = async (gw: TestGateway, token: string) =>
  (await fetch(`${gw.url}/1/tenants/acme`, { headers: { authorization: bearer(token) } })).status;

describe('token exchange on a shared Redis store', () => {
  it('creates the user on one instance, signs them in on the other, and ends them on both', async () => {
    const first = await exchange(fx.gw, await idp.idToken('dana'));
    expect(first.status).toBe(200);
    const store = second.gateway.store;
    const user = await store.users.findUserByEmail('dana@acme.test');
    expect(user?.createdByIdp).toEqual({ tenantId: 'acme', issuer: idp.issuer });
    expect(user?.passwordHash).toBe('*');

    const res = await exchange(second, await idp.idToken('dana'));
    expect(res.status).toBe(200);
    const { access_token: token } = (await res.json()) as { access_token: string };
    expect(await tenantStatus(fx.gw, token)).toBe(200);

    expect(await store.memberships.removeMember('acme', user?.id as string)).toBe(true);
    expect(await tenantStatus(fx.gw, token)).toBe(401);
    expect(await tenantStatus(second, token)).toBe(401);

    // The IdP created them: its next sign-in joins them again (a new membership, a new token).
    const again = await exchange(fx.gw, await idp.idToken('dana'));
    expect(again.status).toBe(200);
    const renewed = ((await again.json()) as { access_token: string }).access_token;
    expect(await tenantStatus(second, renewed)).toBe(200);
  });
});
