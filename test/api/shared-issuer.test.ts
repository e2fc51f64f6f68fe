/**
 * Issue 42, finding 6: one issuer (Google, a shared Entra ID app's tenant)
 * serves several tenants, each through a client id of its own: unique on
 * issuer + client id, never on the issuer alone. On a real gateway with one
 * HTTPS OIDC provider holding two clients, acme's and globex's: both tenants
 * set it, each exchange yields a token only for the tenant whose own record's
 * client id the ID token's `aud` names; the same pair twice is 409.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../support/expect-error.js';
import { bearer } from '../support/gateway.js';
import { fixtureSuite } from '../support/fixture-suite.js';
import { ALICE, BOB, tokenFor } from '../support/identity-fixture.js';
import { verifyDomains } from '../support/verified-domains.js';
import { ACME_CLIENT, GLOBEX_CLIENT, exchangeAt } from '../support/token-exchange.js';
import { loopbackSso, useTestIdps } from '../support/test-idps.js';

let aliceAcme: string;
let bobGlobex: string;

const idps = useTestIdps({
  shared: {
    alg: 'ES256',
    clients: [ACME_CLIENT, GLOBEX_CLIENT],
    accounts: {
      ann: 'ann@acme.test',
      gus: 'gus@globex.test',
    },
  },
});

const s = fixtureSuite({}, () => ({ sso: loopbackSso(idps.ca) }));

beforeAll(async () => {
  await verifyDomains(s.gw.gateway.store, 'acme', ['acme.test']);
  await verifyDomains(s.gw.gateway.store, 'globex', ['globex.test']);
  aliceAcme = (await tokenFor(s.gw.url, ALICE, 'acme')).access_token;
  bobGlobex = (await tokenFor(s.gw.url, BOB, 'globex')).access_token;
}, 60_000);

function putIdp(tenant: string, token: string, clientId: string, domain: string) {
  return fetch(`${s.gw.url}/1/tenants/${tenant}/idp`, {
    method: 'PUT',
    headers: { authorization: bearer(token), 'content-type': 'application/json' },
    body: JSON.stringify({ issuer: idps.shared.issuer, client_id: clientId, domains: [domain] }),
  });
}

const exchange = (subjectToken: string, tenantId: string) =>
  exchangeAt(s.gw.url, subjectToken, tenantId);

describe('one issuer, two tenants, a client id each', () => {
  it('both tenants set the same issuer with their own client ids; the same pair again is 409', async () => {
    expect((await putIdp('acme', aliceAcme, ACME_CLIENT.clientId, 'acme.test')).status).toBe(201);
    const second = await putIdp('globex', bobGlobex, GLOBEX_CLIENT.clientId, 'globex.test');
    expect(second.status, await second.clone().text()).toBe(201);
    const again = await putIdp('globex', bobGlobex, ACME_CLIENT.clientId, 'globex.test');
    await expectError(again, 409, 'issuer_in_use');
    expect((await s.gw.gateway.store.idps.getTenantIdp('globex'))?.clientId).toBe(
      GLOBEX_CLIENT.clientId,
    );
  });

  it("each exchange works for its own tenant only: `aud` must be that record's client id", async () => {
    const forAcme = await exchange(await idps.shared.idToken('ann', ACME_CLIENT), 'acme');
    const acmeAnswer = (await forAcme.json()) as { tenant_id: string };
    expect([forAcme.status, acmeAnswer.tenant_id]).toEqual([200, 'acme']);
    const forGlobex = await exchange(await idps.shared.idToken('gus', GLOBEX_CLIENT), 'globex');
    const globexAnswer = (await forGlobex.json()) as { tenant_id: string };
    expect([forGlobex.status, globexAnswer.tenant_id]).toEqual([200, 'globex']);
    // The same issuer's token for the other tenant's client: refused at each.
    await expectError(
      await exchange(await idps.shared.idToken('gus', GLOBEX_CLIENT), 'acme'),
      400,
      'invalid_grant',
    );
    await expectError(
      await exchange(await idps.shared.idToken('ann', ACME_CLIENT), 'globex'),
      400,
      'invalid_grant',
    );
    const gus = await s.gw.gateway.store.users.findUserByEmail('gus@globex.test');
    expect(await s.gw.gateway.store.memberships.isMember('acme', gus?.id as string)).toBe(false);
  });
});
