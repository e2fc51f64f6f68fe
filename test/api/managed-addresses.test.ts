/**
 * Issue 42, finding 1's squat class: an address whose domain a tenant has
 * verified is that tenant's to manage. On a real gateway (memory store,
 * `signup.enabled`) with acme's HTTPS OIDC provider and a DNS server on
 * loopback answering acme's TXT challenges: signup refuses such an address
 * (403, no user made, no tenant named) while other domains still sign up;
 * acme's provider still creates its people at their first sign-in; and a
 * local account squatted before acme verified its domain loses its password
 * and its tokens when acme's provider links it (`link_existing`).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer } from '../support/dns-server.js';
import { fixtureSuite } from '../support/fixture-suite.js';
import { suiteResource } from '../support/suite-resource.js';
import { expectError } from '../support/expect-error.js';
import { basic, bearerJson } from '../support/gateway.js';
import { ALICE, tokenFor } from '../support/identity-fixture.js';
import { ACME_CLIENT, exchangeAt } from '../support/token-exchange.js';
import { signUp } from '../support/account-requests.js';
import { loopbackSso, useTestIdps } from '../support/test-idps.js';

/** Acme's domain, verified at the start. */
const ACME_DOMAIN = 'acme.test';
/** A domain acme verifies only after someone signed up an address of it. */
const LATE_DOMAIN = 'acme-late.test';
const SQUATTER = { email: `boss@${LATE_DOMAIN}`, password: 'squatter-password-1' };

let aliceAcme: string;

const idps = useTestIdps({
  acmeIdp: {
    alg: 'RS256',
    clients: [ACME_CLIENT],
    accounts: {
      newhire: { email: `newhire@${ACME_DOMAIN}`, emailVerified: true },
      boss: SQUATTER.email,
    },
  },
});

const dns = suiteResource(startDnsServer, (d) => d.stop());
const s = fixtureSuite({}, () => ({
  sso: loopbackSso(idps.ca, { dnsServers: [dns().address] }),
}));

beforeAll(async () => {
  aliceAcme = (await tokenFor(s.gw.url, ALICE, 'acme')).access_token;
  await verifyByDns(ACME_DOMAIN);
  await setAcmeIdp([ACME_DOMAIN]);
}, 60_000);

const call = (method: string, path: string, token: string, body?: unknown) =>
  bearerJson(s.gw.url, method, path, token, body);

/** Acme's admin claims the domain, publishes its TXT record and verifies it. */
async function verifyByDns(domain: string): Promise<void> {
  const claim = await call('POST', '/1/tenants/acme/domains', aliceAcme, { domain });
  expect(claim.status).toBe(201);
  const { txt_name, txt_value } = (await claim.json()) as Record<string, string>;
  dns().setTxt(txt_name as string, [txt_value as string]);
  const verify = await call('POST', `/1/tenants/acme/domains/${domain}/verify`, aliceAcme);
  expect(verify.status).toBe(200);
}

async function setAcmeIdp(domains: string[]): Promise<void> {
  const put = await call('PUT', '/1/tenants/acme/idp', aliceAcme, {
    issuer: idps.acmeIdp.issuer,
    client_id: ACME_CLIENT.clientId,
    domains,
    role: 'member',
    link_existing: true,
  });
  expect([200, 201]).toContain(put.status);
}

const signup = (email: string, password = 'a-password-of-mine-1') =>
  signUp(s.gw.url, { email, password });

const exchange = (subjectToken: string) => exchangeAt(s.gw.url, subjectToken, 'acme');

function basicToken(user: { email: string; password: string }, tenantId: string) {
  return fetch(`${s.gw.url}/1/token?tenant_id=${encodeURIComponent(tenantId)}`, {
    headers: { authorization: basic(user.email, user.password) },
  });
}

async function acmeEvents(name: string): Promise<Record<string, unknown>[]> {
  const events = await s.gw.gateway.store
    .auditLog({ maxEventsPerStream: 10_000 })
    .read('tenant:acme', 0);
  return events
    .map((e) => JSON.parse(e.event) as Record<string, unknown>)
    .filter((e) => e.event === name);
}

describe('signup of an address of a verified domain (issue 42)', () => {
  it('is refused 403 forbidden, naming no tenant, and makes no user', async () => {
    for (const email of [`newhire@${ACME_DOMAIN}`, `NewHire@ACME.test`, `x.y@${ACME_DOMAIN}`]) {
      const body = await expectError(await signup(email), 403, 'forbidden');
      expect(body.error_description).toMatch(/sign in through their organisation/);
      expect(body.error_description).not.toMatch(/acme/i);
      expect(await s.gw.gateway.store.users.findUserByEmail(email.toLowerCase())).toBeNull();
    }
  });

  it('still signs up an address of a domain no tenant has verified (claimed but unverified too)', async () => {
    const claim = await call('POST', '/1/tenants/acme/domains', aliceAcme, {
      domain: 'acme-unproven.test',
    });
    expect(claim.status).toBe(201);
    for (const email of ['pat@elsewhere.test', 'pat@acme-unproven.test']) {
      const res = await signup(email);
      expect(res.status).toBe(201);
      expect(await s.gw.gateway.store.users.findUserByEmail(email)).not.toBeNull();
    }
  });

  it("leaves the address to acme's provider, which creates the user at their first sign-in", async () => {
    const res = await exchange(await idps.acmeIdp.idToken('newhire'));
    expect(res.status).toBe(200);
    const user = await s.gw.gateway.store.users.findUserByEmail(`newhire@${ACME_DOMAIN}`);
    expect(user?.createdByIdp).toEqual({ tenantId: 'acme', issuer: idps.acmeIdp.issuer });
    // Issue 45: the provider vouched `email_verified`.
    expect(user?.emailVerifiedAt).toEqual(expect.any(Number));
  });
});

describe('a squatted account linked by the tenant’s provider (link_existing, issue 42)', () => {
  it("ends the squatter's password and tokens, and the link's audit event says so", async () => {
    // Signed up before acme verified the domain: the only way such an account exists now.
    const made = await signup(SQUATTER.email, SQUATTER.password);
    expect(made.status).toBe(201);
    const { tenant_id: personal } = (await made.json()) as { tenant_id: string };
    const earlier = await basicToken(SQUATTER, personal);
    expect(earlier.status).toBe(200);
    const squatterToken = ((await earlier.json()) as { access_token: string }).access_token;
    expect((await call('GET', `/1/tenants/${personal}`, squatterToken)).status).toBe(200);

    await verifyByDns(LATE_DOMAIN);
    await setAcmeIdp([ACME_DOMAIN, LATE_DOMAIN]);
    // Issue 45: an address nobody proved is never linked; this one's owner had proved it
    // (the person before their organisation adopted SSO), so it is, and its password ends.
    expect((await exchange(await idps.acmeIdp.idToken('boss'))).status).toBe(400);
    const store = s.gw.gateway.store;
    const squatter = await store.users.findUserByEmail(SQUATTER.email);
    await store.users.markEmailVerified(squatter?.id as string, Math.floor(Date.now() / 1000));
    const linked = await exchange(await idps.acmeIdp.idToken('boss'));
    expect(linked.status).toBe(200);
    const { access_token: member } = (await linked.json()) as { access_token: string };

    // The password set at signup opens nothing any more, for any tenant.
    await expectError(await basicToken(SQUATTER, personal), 401, 'invalid_credentials');
    await expectError(await basicToken(SQUATTER, 'acme'), 401, 'invalid_credentials');
    // The token taken with it before the link is refused.
    await expectError(
      await call('GET', `/1/tenants/${personal}`, squatterToken),
      401,
      'invalid_token',
    );
    // The provider's sign-in is the way in now.
    expect((await call('GET', '/1/tenants/acme', member)).status).toBe(200);

    const joined = (await acmeEvents('federated_member_joined')).filter(
      (e) => e.user_email === SQUATTER.email,
    );
    expect(joined).toEqual([
      expect.objectContaining({ linked: true, password_ended: true, role: 'member' }),
    ]);
  });

  it("keeps the provider's own user's state: no password to end, no link", async () => {
    const again = await exchange(await idps.acmeIdp.idToken('newhire'));
    expect(again.status).toBe(200);
    const joined = (await acmeEvents('federated_member_joined')).filter(
      (e) => e.user_email === `newhire@${ACME_DOMAIN}`,
    );
    expect(joined).toHaveLength(1);
    expect(joined[0]).not.toHaveProperty('password_ended');
    expect(joined[0]).not.toHaveProperty('linked');
  });
});
