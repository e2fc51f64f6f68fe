/**
 * Issue 42, findings 8 and 11 on running gateways with sign-in on and acme's
 * identity provider (`oidc-provider` over HTTPS): the `redirect_uri` the
 * gateway sends the provider is built from `publicUrl`, or else from a Host
 * that is a valid host[:port] — a login with `Host: a.example/x?y=` is a 400,
 * never a redirect carrying it. And a user's token issued by the token
 * exchange or by the sign-in's code is counted as `principal="user"` (as its
 * access line names the user), never `none`.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getWithHost, type HostAnswer } from '../support/host-request.js';
import { loadSecretSealer } from '../../src/auth/sealed-secrets.js';
import { adminUrlOf } from '../support/gateway.js';
import { startMemoryIdentityFixture, type IdentityFixture } from '../support/identity-fixture.js';
import { makeTestCa, startTestIdp, type TestCa, type TestIdp } from '../support/oidc-idp.js';
import { scrape, total } from '../support/prometheus-text.js';
import { callback, redeemCode, throughIdp } from '../support/sso-sign-in.js';
import { verifyDomains } from '../support/verified-domains.js';

const CLIENT = { clientId: 'gateway-acme', clientSecret: 'acme-secret-0123456789abcdef' };
const APP = 'https://app.example.test/signed-in';
const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ID_TOKEN = 'urn:ietf:params:oauth:token-type:id_token';
/** The application's PKCE verifier (S256 is required, issue 42). */
const VERIFIER = randomBytes(32).toString('base64url');
const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url');
const LOGIN = `/1/tenants/acme/sso/login?${new URLSearchParams({
  redirect_uri: APP,
  code_challenge: CHALLENGE,
  code_challenge_method: 'S256',
})}`;

let ca: TestCa;
let idp: TestIdp;
let idpAgent: Agent;
let keyDir: string;
/** Sign-in on, no publicUrl: origins from the Host. */
let byHost: IdentityFixture;
/** Sign-in on, publicUrl set. */
let fixed: IdentityFixture;

beforeAll(async () => {
  ca = makeTestCa();
  idpAgent = new Agent({ connect: { ca: ca.ca } });
  idp = await startTestIdp({
    ca,
    alg: 'ES256',
    clients: [CLIENT],
    accounts: {
      ann: { email: 'ann@acme.test', emailVerified: true },
      bea: { email: 'bea@acme.test', emailVerified: true },
    },
  });
  keyDir = mkdtempSync(join(tmpdir(), 'tg-public-origin-'));
  const keyFile = join(keyDir, 'sso-secrets.key');
  writeFileSync(keyFile, `${randomBytes(32).toString('base64')}\n`);
  const sso = {
    enabled: true,
    ca: ca.caFile,
    secretsKeyFile: keyFile,
    redirectUris: [APP],
    allowPrivateIssuers: true,
  };
  [byHost, fixed] = await Promise.all([
    startMemoryIdentityFixture({ sso }),
    startMemoryIdentityFixture({ sso, publicUrl: 'https://gw.example.com' }),
  ]);
  idp.allowRedirectUri(`${byHost.gw.url}/1/sso/callback`);
  // Acme's provider, written as the admins' API would (sealed secret): this suite is not about setting it.
  const sealer = await loadSecretSealer(keyFile);
  for (const fx of [byHost, fixed])
    await fx.gw.gateway.store.idps.setTenantIdp({
      tenantId: 'acme',
      issuer: idp.issuer,
      clientId: CLIENT.clientId,
      clientSecretSealed: sealer.seal(CLIENT.clientSecret, 'acme'),
      domains: ['acme.test'],
      role: 'member',
      linkExisting: false,
      updatedAt: Math.floor(Date.now() / 1000),
    });
  for (const fx of [byHost, fixed]) await verifyDomains(fx.gw.gateway.store, 'acme', ['acme.test']);
}, 60_000);

afterAll(async () => {
  await byHost?.close();
  await fixed?.close();
  await idp?.close();
  await idpAgent?.close();
  ca?.close();
  if (keyDir !== undefined) rmSync(keyDir, { recursive: true, force: true });
});

/** The `redirect_uri` the gateway sent the provider, from a login's 302. */
function redirectUriOf(answer: HostAnswer): string {
  expect(answer.status).toBe(302);
  const location = new URL(answer.headers.location as string);
  expect(location.origin).toBe(idp.issuer);
  return location.searchParams.get('redirect_uri') as string;
}

describe("the sign-in's redirect_uri at the provider", () => {
  it('is never built from a Host that is not a valid host[:port]: 400 invalid_request, no redirect', async () => {
    for (const host of ['a.example/x?y=', 'a.example#x', 'u@a.example', 'a.example:1:2']) {
      const res = await getWithHost(byHost.gw.url, LOGIN, host);
      expect([host, res.status]).toEqual([host, 400]);
      expect(res.headers.location).toBeUndefined();
      expect(JSON.parse(res.body)).toMatchObject({ error: 'invalid_request' });
      expect(res.body).not.toContain(host);
    }
  });

  it('is on the valid Host without publicUrl', async () => {
    const res = await getWithHost(byHost.gw.url, LOGIN, 'GW.Example.Test:8443');
    expect(redirectUriOf(res)).toBe('http://gw.example.test:8443/1/sso/callback');
  });

  it('is on publicUrl whatever the Host, and the binding cookie is Secure', async () => {
    for (const host of ['a.example/x?y=', 'evil.example']) {
      const res = await getWithHost(fixed.gw.url, LOGIN, host);
      expect(redirectUriOf(res)).toBe('https://gw.example.com/1/sso/callback');
      expect(String(res.headers['set-cookie'])).toContain('; Secure');
    }
  });
});

describe('a user token from the exchange or the code is counted as principal="user"', () => {
  async function counts(): Promise<{ user: number; none: number }> {
    const samples = await scrape(adminUrlOf(byHost.gw));
    const at = (principal: string) =>
      total(samples, 'tenant_gateway_requests_total', {
        route: 'api',
        method: 'POST',
        code: '200',
        principal,
      });
    return { user: at('user'), none: at('none') };
  }

  it('the token exchange', async () => {
    const idToken = await idp.idToken('ann', CLIENT);
    const before = await counts();
    const res = await fetch(`${byHost.gw.url}/1/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: EXCHANGE,
        subject_token: idToken,
        subject_token_type: ID_TOKEN,
        tenant_id: 'acme',
      }),
    });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    expect(await counts()).toEqual({ user: before.user + 1, none: before.none });
  });

  it("the browser sign-in's code", async () => {
    const started = await throughIdp({
      gatewayUrl: byHost.gw.url,
      issuer: idp.issuer,
      agent: idpAgent,
      start: `${byHost.gw.url}${LOGIN}`,
      account: 'bea',
    });
    const back = await callback(started.callbackUrl, started.cookie);
    expect(back.status).toBe(302);
    const code = new URL(back.headers.get('location') as string).searchParams.get('code');
    const before = await counts();
    const res = await redeemCode(byHost.gw.url, {
      code: code as string,
      redirect_uri: APP,
      code_verifier: VERIFIER,
    });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    expect(await counts()).toEqual({ user: before.user + 1, none: before.none });
  });
});
