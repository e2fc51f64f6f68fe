/**
 * The browser sign-in's callback against a provider that misbehaves in ways
 * a real `oidc-provider` will not (`test/api/sso-browser.test.ts` runs the
 * real one): an ID token without the nonce, typed as an access token, or
 * signed HS256; a token endpoint that refuses the code, or fails. Each
 * refusal has its reason, and no gateway code is written. And PKCE (issue
 * 42): a sign-in without a S256 challenge is refused, and a code without one
 * (written before it was required) is refused at redemption.
 */
import { createHash } from 'node:crypto';
import { createLocalJWKSet, exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Accounts } from '../../src/auth/accounts.js';
import {
  createBrowserSignIn,
  type BrowserSignIn,
} from '../../src/auth/federation/browser-sign-in.js';
import type { ProviderHttp } from '../../src/auth/federation/https-json.js';
import { createProviderDiscovery } from '../../src/auth/federation/provider-discovery.js';
import { refusalOf } from '../../src/auth/federation/refusals.js';
import { GatewayError } from '../../src/errors.js';
import { createMemoryStore } from '../../src/store/memory-store.js';
import type { Store } from '../../src/store/types.js';
import { newUser, NOW, orgTenant } from '../store/store-fixtures.js';
import { verifyDomains } from '../support/verified-domains.js';

const ISSUER = 'https://idp.acme.test';
const APP = 'https://app.acme.test/signed-in';
/** A S256 challenge (its verifier does not matter here). */
const PKCE = {
  codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
  codeChallengeMethod: 'S256',
};

let privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
let publicJwk: JWK;
/** What the fake token endpoint answers next. */
let answer: { status: number; json: unknown } | Error;

beforeAll(async () => {
  const pair = await generateKeyPair('ES256', { extractable: true });
  privateKey = pair.privateKey;
  publicJwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256' };
});

const http: ProviderHttp = {
  getJson: async () => ({
    issuer: ISSUER,
    jwks_uri: `${ISSUER}/jwks`,
    authorization_endpoint: `${ISSUER}/auth`,
    token_endpoint: `${ISSUER}/token`,
  }),
  postForm: async () => {
    if (answer instanceof Error) throw answer;
    return answer;
  },
  jwksFetch: async () => new Response('{}'),
  close: async () => {},
};

async function setUp(): Promise<{ store: Store; signIn: BrowserSignIn }> {
  const store = createMemoryStore();
  await store.tenants.upsertTenant(orgTenant('acme'), NOW);
  await verifyDomains(store, 'acme', ['acme.test']);
  await store.idps.setTenantIdp({
    tenantId: 'acme',
    issuer: ISSUER,
    clientId: 'gw',
    domains: ['acme.test'],
    role: 'member',
    linkExisting: false,
    updatedAt: NOW,
  });
  const signIn = createBrowserSignIn({
    store,
    accounts: {} as Accounts,
    keys: { keysFor: async () => createLocalJWKSet({ keys: [publicJwk] }) },
    http,
    sealer: undefined,
    clockSkewSeconds: 30,
    redirectUris: [APP],
    discovery: createProviderDiscovery({
      http,
      maxAgeMs: 60_000,
      failureCacheMs: 0,
      maxProviders: 10,
    }),
  });
  return { store, signIn };
}

function idToken(claims: Record<string, unknown>, typ = 'JWT') {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ email: 'ann@acme.test', email_verified: true, ...claims })
    .setProtectedHeader({ alg: 'ES256', kid: 'k1', typ })
    .setIssuer(ISSUER)
    .setAudience('gw')
    .setSubject('ann')
    .setIssuedAt(now)
    .setExpirationTime(now + 300)
    .sign(privateKey);
}

/** Starts a sign-in and runs its callback; @returns the refusal's reason, or the error's code. */
async function callbackRefusal(signIn: BrowserSignIn): Promise<string> {
  const started = await signIn.start({
    tenantId: 'acme',
    redirectUri: APP,
    callbackUrl: 'https://gw/cb',
    ...PKCE,
  });
  const err = await signIn
    .finish({ state: started.state, binding: started.binding, code: 'c' }, {})
    .then(
      () => new Error('signed in'),
      (e: unknown) => e,
    );
  expect(err).toBeInstanceOf(GatewayError);
  return refusalOf(err) ?? (err as GatewayError).code;
}

describe('the callback refuses', () => {
  it('an e-mail of a domain in the record that the tenant no longer has verified (issue 42): no user found or created', async () => {
    const { store, signIn } = await setUp();
    expect(await store.domains.removeTenantDomain('acme', 'acme.test')).toBe(true);
    const started = await signIn.start({
      tenantId: 'acme',
      redirectUri: APP,
      callbackUrl: 'https://gw/cb',
      ...PKCE,
    });
    const nonce = new URL(started.location).searchParams.get('nonce') as string;
    answer = { status: 200, json: { id_token: await idToken({ nonce }) } };
    const err = await signIn
      .finish({ state: started.state, binding: started.binding, code: 'c' }, {})
      .then(
        () => new Error('signed in'),
        (e: unknown) => e,
      );
    expect(refusalOf(err)).toBe('domain_not_allowed');
    expect(await store.users.findUserByEmail('ann@acme.test')).toBeNull();
  });

  it('an ID token without a nonce, or with another one', async () => {
    const { signIn } = await setUp();
    answer = { status: 200, json: { id_token: await idToken({}) } };
    expect(await callbackRefusal(signIn)).toBe('nonce');
    answer = { status: 200, json: { id_token: await idToken({ nonce: 'another' }) } };
    expect(await callbackRefusal(signIn)).toBe('nonce');
  });

  it('an access token in place of the ID token, or HS256', async () => {
    const { signIn } = await setUp();
    answer = { status: 200, json: { id_token: await idToken({}, 'at+jwt') } };
    expect(await callbackRefusal(signIn)).toBe('algorithm');
    const hs = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer(ISSUER)
      .sign(new Uint8Array(32));
    answer = { status: 200, json: { id_token: hs } };
    expect(await callbackRefusal(signIn)).toBe('algorithm');
  });

  it("the provider's refusal of the code, or an answer without an ID token", async () => {
    const { signIn } = await setUp();
    answer = { status: 400, json: { error: 'invalid_grant' } };
    expect(await callbackRefusal(signIn)).toBe('code_refused');
    answer = { status: 200, json: { access_token: 'x' } };
    expect(await callbackRefusal(signIn)).toBe('code_refused');
  });

  it('the token endpoint failing: unavailable (503)', async () => {
    const { signIn } = await setUp();
    answer = { status: 502, json: undefined };
    expect(await callbackRefusal(signIn)).toBe('unavailable');
    answer = new Error('connect ECONNREFUSED');
    expect(await callbackRefusal(signIn)).toBe('unavailable');
  });

  it('a binding of another browser, before the provider is asked', async () => {
    const { signIn } = await setUp();
    const started = await signIn.start({
      tenantId: 'acme',
      redirectUri: APP,
      callbackUrl: 'https://gw/cb',
      ...PKCE,
    });
    answer = new Error('must not be called');
    const err = await signIn
      .finish({ state: started.state, binding: 'another', code: 'c' }, {})
      .catch((e: unknown) => e);
    expect((err as GatewayError).code).toBe('invalid_request');
  });
});

describe('PKCE S256 is required (issue 42)', () => {
  it('a sign-in without a challenge, with plain, or a method alone: invalid_request', async () => {
    const { signIn } = await setUp();
    const base = { tenantId: 'acme', redirectUri: APP, callbackUrl: 'https://gw/cb' };
    for (const pkce of [
      {},
      { codeChallenge: PKCE.codeChallenge },
      { codeChallenge: PKCE.codeChallenge, codeChallengeMethod: 'plain' },
      { codeChallengeMethod: 'S256' },
    ]) {
      const err = await signIn.start({ ...base, ...pkce }).catch((e: unknown) => e);
      expect((err as GatewayError).code, JSON.stringify(pkce)).toBe('invalid_request');
    }
  });

  it('a code without a challenge (written before PKCE was required) redeemed without a verifier: invalid_grant', async () => {
    const { store, signIn } = await setUp();
    const code = 'code-of-an-older-sign-in';
    const digest = createHash('sha256').update(code).digest('base64url');
    // A real user: only the missing verifier stands between the code and a token.
    const user = await store.users.createUser(newUser({ email: 'ann@acme.test' }));
    const issued = { tenantId: 'acme', userId: user.id, redirectUri: APP };
    await store.sso.putSsoRecord('code', digest, JSON.stringify(issued), 60);
    let granted = false;
    const err = await signIn
      .redeem({ code, redirectUri: APP }, async () => {
        granted = true;
        throw new Error('granted');
      })
      .catch((e: unknown) => e);
    expect(granted).toBe(false);
    expect((err as GatewayError).code).toBe('invalid_grant');
  });
});
