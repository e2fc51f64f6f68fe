/**
 * Issue 42, findings 8 and 11 on running gateways with sign-in on and acme's
 * identity provider (`oidc-provider` over HTTPS): the `redirect_uri` the
 * gateway sends the provider is built from `publicUrl`, or else from a Host
 * that is a valid host[:port] — a login with `Host: a.example/x?y=` is a 400,
 * never a redirect carrying it. (A user's token issued by the token
 * exchange or by the sign-in's code is counted as `principal="user"`:
 * `grants-issued.test.ts` walks every grant.)
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAcmeIdp, APP, type AcmeIdp } from '../support/acme-idp.js';
import { getWithHost, type HostAnswer } from '../support/host-request.js';
import { startMemoryIdentityFixture, type IdentityFixture } from '../support/identity-fixture.js';

/** The application's PKCE verifier (S256 is required, issue 42). */
const VERIFIER = randomBytes(32).toString('base64url');
const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url');
const LOGIN = `/1/tenants/acme/sso/login?${new URLSearchParams({
  redirect_uri: APP,
  code_challenge: CHALLENGE,
  code_challenge_method: 'S256',
})}`;

let acme: AcmeIdp;
/** Sign-in on, no publicUrl: origins from the Host. */
let byHost: IdentityFixture;
/** Sign-in on, publicUrl set. */
let fixed: IdentityFixture;

beforeAll(async () => {
  acme = await startAcmeIdp({ ann: { email: 'ann@acme.test', emailVerified: true } });
  const sso = acme.sso;
  [byHost, fixed] = await Promise.all([
    startMemoryIdentityFixture({ sso }),
    startMemoryIdentityFixture({ sso, publicUrl: 'https://gw.example.com' }),
  ]);
  // Acme's provider, written as the admins' API would (sealed secret): this suite is not about setting it.
  for (const fx of [byHost, fixed]) await acme.provide(fx.gw);
}, 60_000);

afterAll(async () => {
  await byHost?.close();
  await fixed?.close();
  await acme?.close();
});

/** The `redirect_uri` the gateway sent the provider, from a login's 302. */
function redirectUriOf(answer: HostAnswer): string {
  expect(answer.status).toBe(302);
  const location = new URL(answer.headers.location as string);
  expect(location.origin).toBe(acme.idp.issuer);
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
