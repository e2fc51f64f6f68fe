/**
 * Issue 42, finding 1: an identity provider vouches only for e-mail domains
 * its tenant has verified. On a real gateway (memory store) with two HTTPS
 * OIDC providers and a DNS server on loopback (`sso.dnsServers`): globex's
 * admin cannot claim acme's people (the IdP set is refused, and an IdP record
 * naming their domain anyway signs in, links or creates no one); a domain is
 * verified end to end by its TXT record; a verified domain belongs to one
 * tenant; a removed domain signs no one in any more.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer } from '../support/dns-server.js';
import { fixtureSuite } from '../support/fixture-suite.js';
import { suiteResource } from '../support/suite-resource.js';
import { expectError } from '../support/expect-error.js';
import { bearerJson } from '../support/gateway.js';
import { ALICE, tokenFor, seedTokens } from '../support/identity-fixture.js';
import type { TestIdp } from '../support/oidc-idp.js';
import { ACME_CLIENT, GLOBEX_CLIENT, exchangeAt } from '../support/token-exchange.js';
import { loopbackSso, useTestIdps } from '../support/test-idps.js';

/** ALICE's address: acme's admin, a user of example.com. */
const VICTIM_DOMAIN = 'example.com';

/** Alice: acme's admin. */
let aliceAcme: string;
/** Bob: a member of acme, globex's admin. */
let bobAcme: string;
let bobGlobex: string;

const idps = useTestIdps({
  acmeIdp: {
    alg: 'RS256',
    clients: [ACME_CLIENT],
    accounts: { ann: 'ann@acme.test' },
  },
  globexIdp: {
    alg: 'ES256',
    clients: [GLOBEX_CLIENT],
    accounts: {
      alice: ALICE.email,
      newhire: { email: `newhire@${VICTIM_DOMAIN}`, emailVerified: true },
      gus: 'gus@globex.test',
    },
  },
});

const dns = suiteResource(startDnsServer, (d) => d.stop());
// Globex's own provider, whose admin makes it say anything about anyone.
const s = fixtureSuite({}, () => ({
  sso: loopbackSso(idps.ca, { dnsServers: [dns().address] }),
}));

beforeAll(async () => {
  ({ aliceAcme, bobAcme, bobGlobex } = await seedTokens(s.gw.url));
}, 60_000);

const call = (method: string, path: string, token: string, body?: unknown) =>
  bearerJson(s.gw.url, method, path, token, body);

async function json(res: Response, status: number): Promise<any> {
  const text = await res.text();
  expect({ status: res.status, text }).toMatchObject({ status });
  return JSON.parse(text);
}

const exchange = (subjectToken: string, tenantId: string) =>
  exchangeAt(s.gw.url, subjectToken, tenantId);

const idpSettings = (idp: TestIdp, clientId: string, domains: string[]) => ({
  issuer: idp.issuer,
  client_id: clientId,
  domains,
  role: 'admin',
  link_existing: true,
});

describe("globex's admin claiming acme's people (issue 42, finding 1)", () => {
  it('cannot set an IdP for a domain globex has not verified (400 domain_not_verified)', async () => {
    const put = await call(
      'PUT',
      '/1/tenants/globex/idp',
      bobGlobex,
      idpSettings(idps.globexIdp, GLOBEX_CLIENT.clientId, [VICTIM_DOMAIN]),
    );
    const body = await expectError(put, 400, 'domain_not_verified');
    expect(body.error_description).toContain(VICTIM_DOMAIN);
    expect(await s.gw.gateway.store.idps.getTenantIdp('globex')).toBeNull();
  });

  it('cannot verify the domain without its TXT record (400 domain_not_verified)', async () => {
    const claimed = await json(
      await call('POST', '/1/tenants/globex/domains', bobGlobex, { domain: VICTIM_DOMAIN }),
      201,
    );
    expect(claimed).toMatchObject({ domain: VICTIM_DOMAIN, verified: false });
    const verify = await call(
      'POST',
      `/1/tenants/globex/domains/${VICTIM_DOMAIN}/verify`,
      bobGlobex,
    );
    const body = await expectError(verify, 400, 'domain_not_verified');
    expect(body.error_description).toMatch(/TXT record/);
    expect(dns().queries).toContain(`_tenant-gateway-challenge.${VICTIM_DOMAIN}`);
  });

  it('an IdP record naming the domain anyway (set before, or its domain since removed) signs in, links and creates no one', async () => {
    const { store } = s.gw.gateway;
    await store.idps.setTenantIdp({
      tenantId: 'globex',
      issuer: idps.globexIdp.issuer,
      clientId: GLOBEX_CLIENT.clientId,
      domains: [VICTIM_DOMAIN],
      role: 'admin',
      linkExisting: true,
      updatedAt: Math.floor(Date.now() / 1000),
    });
    const alice = await store.users.findUserByEmail(ALICE.email);
    const asAlice = await exchange(await idps.globexIdp.idToken('alice', GLOBEX_CLIENT), 'globex');
    const body = await expectError(asAlice, 400, 'invalid_grant');
    expect(JSON.stringify(body)).not.toContain(alice?.id as string);
    expect(await store.memberships.isMember('globex', alice?.id as string)).toBe(false);
    const squat = await exchange(await idps.globexIdp.idToken('newhire', GLOBEX_CLIENT), 'globex');
    await expectError(squat, 400, 'invalid_grant');
    expect(await store.users.findUserByEmail(`newhire@${VICTIM_DOMAIN}`)).toBeNull();
    expect(await store.idps.removeTenantIdp('globex')).toBe(true);
  });

  it("a domain acme has verified cannot be verified by globex (409 domain_taken), even with globex's TXT published", async () => {
    const { store } = s.gw.gateway;
    const mine = await json(
      await call('POST', '/1/tenants/acme/domains', aliceAcme, { domain: VICTIM_DOMAIN }),
      201,
    );
    const globexClaim = await json(await call('GET', '/1/tenants/globex/domains', bobGlobex), 200);
    const theirs = globexClaim.domains[0].txt_value as string;
    expect(theirs).not.toBe(mine.txt_value);
    dns().setTxt(mine.txt_name, [mine.txt_value, theirs]);
    const verified = await json(
      await call('POST', `/1/tenants/acme/domains/${VICTIM_DOMAIN}/verify`, aliceAcme),
      200,
    );
    expect(verified).toMatchObject({ domain: VICTIM_DOMAIN, verified: true });
    const taken = await call(
      'POST',
      `/1/tenants/globex/domains/${VICTIM_DOMAIN}/verify`,
      bobGlobex,
    );
    await expectError(taken, 409, 'domain_taken');
    expect(await store.domains.verifiedDomainHolder(VICTIM_DOMAIN)).toBe('acme');
    const put = await call(
      'PUT',
      '/1/tenants/globex/idp',
      bobGlobex,
      idpSettings(idps.globexIdp, GLOBEX_CLIENT.clientId, [VICTIM_DOMAIN]),
    );
    await expectError(put, 400, 'domain_not_verified');
    dns().setTxt(mine.txt_name, []);
  });
});

describe('domain verification through DNS, end to end', () => {
  it('challenge → TXT published → verify → the IdP set is accepted and signs people in', async () => {
    const claimed = await json(
      await call('POST', '/1/tenants/current/domains', aliceAcme, { domain: 'Acme.TEST' }),
      201,
    );
    expect(claimed).toEqual({
      domain: 'acme.test',
      verified: false,
      txt_name: '_tenant-gateway-challenge.acme.test',
      txt_value: expect.stringMatching(/^[A-Za-z0-9_-]{32}$/),
    });
    const settings = idpSettings(idps.acmeIdp, ACME_CLIENT.clientId, ['acme.test']);
    await expectError(
      await call('PUT', '/1/tenants/acme/idp', aliceAcme, settings),
      400,
      'domain_not_verified',
    );
    dns().setTxt(claimed.txt_name, ['v=something-else']);
    await expectError(
      await call('POST', '/1/tenants/acme/domains/acme.test/verify', aliceAcme),
      400,
      'domain_not_verified',
    );
    dns().setTxt(claimed.txt_name, ['v=something-else', claimed.txt_value]);
    const before = Math.floor(Date.now() / 1000);
    const verified = await json(
      await call('POST', '/1/tenants/acme/domains/acme.test/verify', aliceAcme),
      200,
    );
    expect(verified).toEqual({
      domain: 'acme.test',
      verified: true,
      verified_at: expect.any(Number),
    });
    expect(verified.verified_at).toBeGreaterThanOrEqual(before);
    // Claimed again: answered as it is.
    expect(
      await json(
        await call('POST', '/1/tenants/acme/domains', aliceAcme, { domain: 'acme.test' }),
        200,
      ),
    ).toEqual(verified);
    expect(
      await json(await call('PUT', '/1/tenants/acme/idp', aliceAcme, settings), 201),
    ).toMatchObject({
      domains: ['acme.test'],
    });
    const signedIn = await exchange(await idps.acmeIdp.idToken('ann', ACME_CLIENT), 'acme');
    expect(signedIn.status, await signedIn.clone().text()).toBe(200);
  });

  it('a removed domain signs no one in, though the IdP record still names it', async () => {
    expect((await call('DELETE', '/1/tenants/acme/domains/acme.test', aliceAcme)).status).toBe(204);
    await expectError(
      await call('DELETE', '/1/tenants/acme/domains/acme.test', aliceAcme),
      404,
      'not_found',
    );
    expect((await s.gw.gateway.store.idps.getTenantIdp('acme'))?.domains).toEqual(['acme.test']);
    const refused = await exchange(await idps.acmeIdp.idToken('ann', ACME_CLIENT), 'acme');
    await expectError(refused, 400, 'invalid_grant');
    const list = await json(await call('GET', '/1/tenants/acme/domains', aliceAcme), 200);
    expect(list.domains.map((d: { domain: string }) => d.domain)).toEqual([VICTIM_DOMAIN]);
  });

  it("is for the tenant's admins only, and org tenants only", async () => {
    await expectError(await call('GET', '/1/tenants/acme/domains', bobAcme), 403, 'forbidden');
    await expectError(
      await call('POST', '/1/tenants/acme/domains', bobAcme, { domain: 'x.example' }),
      403,
      'forbidden',
    );
    await expectError(
      await call('POST', '/1/tenants/acme/domains/x.example/verify', bobGlobex),
      403,
      'tenant_mismatch',
    );
    await expectError(
      await call('POST', '/1/tenants/acme/domains', aliceAcme, { domain: 'not a domain' }),
      400,
      'invalid_request',
    );
    const alice = await s.gw.gateway.store.users.findUserByEmail(ALICE.email);
    const personal = (await tokenFor(s.gw.url, ALICE, alice?.personalTenantId as string))
      .access_token;
    await expectError(await call('GET', '/1/tenants/current/domains', personal), 403, 'forbidden');
  });
});
