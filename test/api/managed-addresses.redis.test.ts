/**
 * Issue 42: a squatted account linked by its tenant's provider
 * (`link_existing`) loses its password and every token on every instance
 * before the sign-in answers. Two gateways on one private redis-server: the
 * squatter's access and refresh tokens work at B; acme's provider links the
 * address at A; at once B refuses them, and the password opens nothing.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { expectError } from '../support/expect-error.js';
import { basic, bearer, type TestGateway } from '../support/gateway.js';
import { startIdentityFixture, type RedisIdentityFixture } from '../support/identity-fixture.js';
import { makeTestCa, startTestIdp, type TestCa, type TestIdp } from '../support/oidc-idp.js';
import { verifyDomains } from '../support/verified-domains.js';

const ACME_CLIENT = { clientId: 'gateway-acme', clientSecret: 'acme-secret-0123456789abcdef' };
const SQUATTER = { email: 'boss@acme-late.test', password: 'squatter-password-1' };

let ca: TestCa;
let acmeIdp: TestIdp;
let fx: RedisIdentityFixture;
let b: TestGateway;

beforeAll(async () => {
  ca = makeTestCa();
  acmeIdp = await startTestIdp({
    ca,
    alg: 'RS256',
    clients: [ACME_CLIENT],
    accounts: { boss: { email: SQUATTER.email, emailVerified: true } },
  });
  fx = await startIdentityFixture({
    sso: { enabled: true, ca: ca.caFile, allowPrivateIssuers: true },
    tokens: { refresh: { enabled: true } },
  });
  b = await fx.startAnother();
}, 60_000);

afterAll(async () => {
  await fx?.close();
  await acmeIdp?.close();
  ca?.close();
});

const basicToken = (gw: TestGateway, tenantId: string) =>
  fetch(`${gw.url}/1/token?tenant_id=${encodeURIComponent(tenantId)}`, {
    headers: { authorization: basic(SQUATTER.email, SQUATTER.password) },
  });
const tenantWith = (gw: TestGateway, token: string) =>
  fetch(`${gw.url}/1/tenants/current`, { headers: { authorization: bearer(token) } });
const oauthToken = (gw: TestGateway, fields: Record<string, string>) =>
  fetch(`${gw.url}/1/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields),
  });

it("ends the squatter's password, access and refresh tokens on every instance at the link", async () => {
  // Signed up at A before acme verified the domain.
  const made = await fetch(`${fx.gw.url}/1/users`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(SQUATTER),
  });
  expect(made.status).toBe(201);
  const { tenant_id: personal } = (await made.json()) as { tenant_id: string };
  const earlier = await basicToken(b, personal);
  expect(earlier.status).toBe(200);
  const tokens = (await earlier.json()) as { access_token: string; refresh_token: string };
  expect((await tenantWith(b, tokens.access_token)).status).toBe(200);

  const store = fx.gw.gateway.store;
  await verifyDomains(store, 'acme', ['acme-late.test']);
  await store.idps.setTenantIdp({
    tenantId: 'acme',
    issuer: acmeIdp.issuer,
    clientId: ACME_CLIENT.clientId,
    domains: ['acme-late.test'],
    role: 'member',
    linkExisting: true,
    updatedAt: Math.floor(Date.now() / 1000),
  });
  const linked = await oauthToken(fx.gw, {
    grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
    subject_token: await acmeIdp.idToken('boss'),
    subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
    tenant_id: 'acme',
  });
  expect(linked.status).toBe(200);

  // B, without waiting: the earlier token, its refresh token and the password are refused.
  await expectError(await tenantWith(b, tokens.access_token), 401, 'invalid_token');
  await expectError(
    await oauthToken(b, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }),
    400,
    'invalid_grant',
  );
  await expectError(await basicToken(b, personal), 401, 'invalid_credentials');
  const { access_token: member } = (await linked.json()) as { access_token: string };
  expect((await tenantWith(b, member)).status).toBe(200);
});
