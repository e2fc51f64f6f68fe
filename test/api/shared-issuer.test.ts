/**
 * Issue 42, finding 6: one issuer (Google, a shared Entra ID app's tenant)
 * serves several tenants, each through a client id of its own: unique on
 * issuer + client id, never on the issuer alone. On a real gateway with one
 * HTTPS OIDC provider holding two clients, acme's and globex's: both tenants
 * set it, each exchange yields a token only for the tenant whose own record's
 * client id the ID token's `aud` names; the same pair twice is 409.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../support/expect-error.js';
import { bearer } from '../support/gateway.js';
import {
  ALICE,
  BOB,
  startMemoryIdentityFixture,
  tokenFor,
  type IdentityFixture,
} from '../support/identity-fixture.js';
import { makeTestCa, startTestIdp, type TestCa, type TestIdp } from '../support/oidc-idp.js';
import { verifyDomains } from '../support/verified-domains.js';

const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ID_TOKEN = 'urn:ietf:params:oauth:token-type:id_token';
const ACME_CLIENT = { clientId: 'gateway-acme', clientSecret: 'acme-secret-0123456789abcdef' };
const GLOBEX_CLIENT = { clientId: 'gateway-globex', clientSecret: 'globex-secret-0123456789abc' };

let ca: TestCa;
let shared: TestIdp;
let fx: IdentityFixture;
let aliceAcme: string;
let bobGlobex: string;

beforeAll(async () => {
  ca = makeTestCa();
  shared = await startTestIdp({
    ca,
    alg: 'ES256',
    clients: [ACME_CLIENT, GLOBEX_CLIENT],
    accounts: {
      ann: { email: 'ann@acme.test', emailVerified: true },
      gus: { email: 'gus@globex.test', emailVerified: true },
    },
  });
  fx = await startMemoryIdentityFixture({
    sso: { enabled: true, ca: ca.caFile, allowPrivateIssuers: true },
  });
  await verifyDomains(fx.gw.gateway.store, 'acme', ['acme.test']);
  await verifyDomains(fx.gw.gateway.store, 'globex', ['globex.test']);
  aliceAcme = (await tokenFor(fx.gw.url, ALICE, 'acme')).access_token;
  bobGlobex = (await tokenFor(fx.gw.url, BOB, 'globex')).access_token;
}, 60_000);

afterAll(async () => {
  await fx?.close();
  await shared?.close();
  ca?.close();
});

function putIdp(tenant: string, token: string, clientId: string, domain: string) {
  return fetch(`${fx.gw.url}/1/tenants/${tenant}/idp`, {
    method: 'PUT',
    headers: { authorization: bearer(token), 'content-type': 'application/json' },
    body: JSON.stringify({ issuer: shared.issuer, client_id: clientId, domains: [domain] }),
  });
}

function exchange(subjectToken: string, tenantId: string): Promise<Response> {
  return fetch(`${fx.gw.url}/1/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: EXCHANGE,
      subject_token: subjectToken,
      subject_token_type: ID_TOKEN,
      tenant_id: tenantId,
    }),
  });
}

describe('one issuer, two tenants, a client id each', () => {
  it('both tenants set the same issuer with their own client ids; the same pair again is 409', async () => {
    expect((await putIdp('acme', aliceAcme, ACME_CLIENT.clientId, 'acme.test')).status).toBe(201);
    const second = await putIdp('globex', bobGlobex, GLOBEX_CLIENT.clientId, 'globex.test');
    expect(second.status, await second.clone().text()).toBe(201);
    const again = await putIdp('globex', bobGlobex, ACME_CLIENT.clientId, 'globex.test');
    await expectError(again, 409, 'issuer_in_use');
    expect((await fx.gw.gateway.store.idps.getTenantIdp('globex'))?.clientId).toBe(
      GLOBEX_CLIENT.clientId,
    );
  });

  it("each exchange works for its own tenant only: `aud` must be that record's client id", async () => {
    const forAcme = await exchange(await shared.idToken('ann', ACME_CLIENT), 'acme');
    const acmeAnswer = (await forAcme.json()) as { tenant_id: string };
    expect([forAcme.status, acmeAnswer.tenant_id]).toEqual([200, 'acme']);
    const forGlobex = await exchange(await shared.idToken('gus', GLOBEX_CLIENT), 'globex');
    const globexAnswer = (await forGlobex.json()) as { tenant_id: string };
    expect([forGlobex.status, globexAnswer.tenant_id]).toEqual([200, 'globex']);
    // The same issuer's token for the other tenant's client: refused at each.
    await expectError(
      await exchange(await shared.idToken('gus', GLOBEX_CLIENT), 'acme'),
      400,
      'invalid_grant',
    );
    await expectError(
      await exchange(await shared.idToken('ann', ACME_CLIENT), 'globex'),
      400,
      'invalid_grant',
    );
    const gus = await fx.gw.gateway.store.users.findUserByEmail('gus@globex.test');
    expect(await fx.gw.gateway.store.memberships.isMember('acme', gus?.id as string)).toBe(false);
  });
});
