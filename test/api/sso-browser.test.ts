/**
 * Issue 34, item 3: the browser sign-in through a tenant's identity provider.
 * `oidc-provider` over HTTPS is acme's IdP (its client secret set through the
 * admins' API, sealed); a running gateway; an application page origin whose
 * `/signed-in` is the one registered `sso.redirectUris`. Chromium goes from
 * the gateway's login URL through the IdP's real login page and back to the
 * application with a code, which the application redeems for a token that
 * works on a proxied route. Then the hostile cases, driven with fetch: an
 * unregistered redirect_uri, a replayed or altered state, a code redeemed
 * twice, with another redirect_uri, with a wrong or missing code_verifier, a
 * sign-in without PKCE S256 (issue 42). The IdPs are on loopback:
 * `sso.allowPrivateIssuers`.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBrowser, startPageOrigin, type PageOrigin } from '../support/browser.js';
import { suiteResource } from '../support/suite-resource.js';
import { expectError } from '../support/expect-error.js';
import { bearer, startTestGateway, bearerJson } from '../support/gateway.js';
import { fixtureSuite } from '../support/fixture-suite.js';
import { ALICE, BOB, startMemoryIdentityFixture, tokenFor } from '../support/identity-fixture.js';
import {
  callback as callbackSupport,
  redeemCode,
  throughIdp as throughSupport,
} from '../support/sso-sign-in.js';
import { startEchoUpstream } from '../support/upstream.js';
import { verifyDomains } from '../support/verified-domains.js';
import { ACME_CLIENT } from '../support/token-exchange.js';
import { loopbackSso, useTestIdps } from '../support/test-idps.js';
import { refreshAt } from '../support/account-requests.js';

const GLOBEX_CLIENT = {
  clientId: 'gateway-globex',
  clientSecret: 'globex-secret-0123456789abcdef',
};

let app: PageOrigin;
let appRedirect: string;
let keyDir: string;
let keyFile: string;
let idpAgent: Agent;

const idps = useTestIdps({
  acme: {
    alg: 'RS256',
    clients: [ACME_CLIENT],
    accounts: {
      ann: 'ann@acme.test',
      bea: 'bea@acme.test',
      una: { email: 'una@acme.test', emailVerified: false },
    },
  },
  globex: {
    alg: 'ES256',
    clients: [GLOBEX_CLIENT],
    accounts: { gus: 'gus@globex.test' },
  },
});

beforeAll(async () => {
  idpAgent = new Agent({ connect: { ca: idps.ca.ca } });
  app = await startPageOrigin();
  appRedirect = `${app.origin}/signed-in`;
  keyDir = mkdtempSync(join(tmpdir(), 'tg-sso-browser-'));
  keyFile = join(keyDir, 'sso.key');
  writeFileSync(keyFile, `${randomBytes(32).toString('base64')}\n`);
});
afterAll(async () => {
  await app?.close();
  await idpAgent?.close();
  if (keyDir !== undefined) rmSync(keyDir, { recursive: true, force: true });
});

const s = fixtureSuite({ upstream: startEchoUpstream }, ({ upstream }) => ({
  sso: loopbackSso(idps.ca, { secretsKeyFile: keyFile, redirectUris: [appRedirect] }),
  tokens: { refresh: { enabled: true } },
  // Many sign-ins from one address in a minute, each a login and a callback.
  limits: { exchange: { perIp: 10_000, windowSeconds: 60 } },
  routes: [{ prefix: '/orders', upstream: upstream.url }],
}));

beforeAll(async () => {
  idps.acme.allowRedirectUri(`${s.gw.url}/1/sso/callback`);
  idps.globex.allowRedirectUri(`${s.gw.url}/1/sso/callback`);
  await verifyDomains(s.gw.gateway.store, 'globex', ['globex.test']);
  await verifyDomains(s.gw.gateway.store, 'acme', ['acme.test']);
  const globexAdmin = await tokenFor(s.gw.url, BOB, 'globex');
  const globexPut = await bearerJson(
    s.gw.url,
    'PUT',
    '/1/tenants/globex/idp',
    globexAdmin.access_token,
    {
      issuer: idps.globex.issuer,
      client_id: GLOBEX_CLIENT.clientId,
      client_secret: GLOBEX_CLIENT.clientSecret,
      domains: ['globex.test'],
    },
  );
  expect(globexPut.status).toBe(201);
  const admin = await tokenFor(s.gw.url, ALICE, 'acme');
  const put = await bearerJson(s.gw.url, 'PUT', '/1/tenants/acme/idp', admin.access_token, {
    issuer: idps.acme.issuer,
    client_id: ACME_CLIENT.clientId,
    client_secret: ACME_CLIENT.clientSecret,
    domains: ['acme.test'],
  });
  expect(put.status).toBe(201);
}, 60_000);

const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

/** The application's PKCE verifier of every sign-in here that does not make its own. */
const VERIFIER = randomBytes(32).toString('base64url');
const PKCE = { code_challenge: s256(VERIFIER), code_challenge_method: 'S256' };

/** The login URL, with {@link PKCE} unless `withPkce` is false (`query` overrides it). */
function loginUrl(query: Record<string, string>, withPkce = true): string {
  const all = { ...(withPkce ? PKCE : {}), ...query };
  return `${s.gw.url}/1/tenants/acme/sso/login?${new URLSearchParams(all)}`;
}

/** Redeems with {@link VERIFIER} unless `form` has a `code_verifier` of its own. */
function redeem(form: Record<string, string>) {
  return redeemCode(s.gw.url, { code_verifier: VERIFIER, ...form });
}

/** The binding cookie (`name=value`) of the last sign-in {@link throughIdp} started. */
let lastBinding = '';

async function throughIdp(
  start: string,
  account: string,
  alter: (toIdp: URL) => void = () => {},
): Promise<string> {
  const started = await throughSupport({
    gatewayUrl: s.gw.url,
    issuer: idps.acme.issuer,
    agent: idpAgent,
    start,
    account,
    alter,
  });
  expect(started.setCookie).toHaveLength(1);
  expect(started.setCookie[0]).toMatch(
    /; Path=\/1\/sso\/callback; Max-Age=600; HttpOnly; SameSite=Lax$/,
  );
  lastBinding = started.cookie;
  return started.callbackUrl;
}

/** The callback followed by the browser that started the sign-in: the gateway's answer, unfollowed. */
function callback(url: string, cookie = lastBinding) {
  return callbackSupport(url, cookie);
}

/** A whole sign-in by fetch; @returns the application's code. */
async function codeFor(account: string, query: Record<string, string> = {}): Promise<string> {
  const res = await callback(
    await throughIdp(loginUrl({ redirect_uri: appRedirect, ...query }), account),
  );
  expect(res.status).toBe(302);
  const back = new URL(res.headers.get('location') as string);
  expect(`${back.origin}${back.pathname}`).toBe(appRedirect);
  return back.searchParams.get('code') as string;
}

describe('in Chromium, through the IdP login page', () => {
  const browser = suiteResource(startBrowser, (b) => b.close());

  it('brings the application a code that it redeems for a token good on a proxied route', async () => {
    const verifier = randomBytes(32).toString('base64url');
    const context = await browser().newContext({ ignoreHTTPSErrors: true });
    const page = await context.newPage();
    await page.goto(
      loginUrl({
        redirect_uri: appRedirect,
        state: 'app-state-1',
        code_challenge: s256(verifier),
        code_challenge_method: 'S256',
      }),
    );
    await page.waitForURL((url) => url.href.startsWith(idps.acme.issuer));
    await page.fill('input[name=login]', 'ann');
    await page.fill('input[name=password]', 'any');
    await page.click('button[type=submit]');
    await page.waitForURL((url) => url.href.startsWith(appRedirect));
    const back = new URL(page.url());
    await context.close();
    expect(back.searchParams.get('state')).toBe('app-state-1');
    expect([...back.searchParams.keys()].sort()).toEqual(['code', 'state']);
    const code = back.searchParams.get('code') as string;

    const res = await redeem({ code, redirect_uri: appRedirect, code_verifier: verifier });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toContain('no-store');
    const token = (await res.json()) as {
      access_token: string;
      token_type: string;
      tenant_id: string;
      refresh_token?: string;
    };
    expect(token.token_type).toBe('Bearer');
    expect(token.tenant_id).toBe('acme');
    const proxied = await fetch(`${s.gw.url}/orders/1`, {
      headers: { authorization: bearer(token.access_token) },
    });
    expect(proxied.status).toBe(200);
    const seen = (await proxied.json()) as { headers: Record<string, string> };
    expect(seen.headers['x-user-email']).toBe('ann@acme.test');
    expect(seen.headers['x-tenant-id']).toBe('acme');
    // tokens.refresh.enabled: the code began a refresh family, as a Basic login does.
    const refreshed = await refreshAt(s.gw.url, token.refresh_token as string);
    expect(refreshed.status).toBe(200);
    expect(((await refreshed.json()) as { tenant_id: string }).tenant_id).toBe('acme');
  }, 60_000);

  it("signs globex's people in at globex's own provider, for globex only", async () => {
    const context = await browser().newContext({ ignoreHTTPSErrors: true });
    const page = await context.newPage();
    await page.goto(
      `${s.gw.url}/1/tenants/globex/sso/login?${new URLSearchParams({ redirect_uri: appRedirect, ...PKCE })}`,
    );
    // Globex's login page, not acme's.
    await page.waitForURL((url) => url.href.startsWith(idps.globex.issuer));
    await page.fill('input[name=login]', 'gus');
    await page.fill('input[name=password]', 'any');
    await page.click('button[type=submit]');
    await page.waitForURL((url) => url.href.startsWith(appRedirect));
    const code = new URL(page.url()).searchParams.get('code') as string;
    await context.close();
    const res = await redeem({ code, redirect_uri: appRedirect });
    expect(res.status).toBe(200);
    const token = (await res.json()) as { access_token: string; tenant_id: string };
    expect(token.tenant_id).toBe('globex');
    const proxied = await fetch(`${s.gw.url}/orders/1`, {
      headers: { authorization: bearer(token.access_token), 'x-tenant-id': 'globex' },
    });
    expect(proxied.status).toBe(200);
    const seen = (await proxied.json()) as { headers: Record<string, string> };
    expect(seen.headers['x-user-email']).toBe('gus@globex.test');
    expect(seen.headers['x-tenant-id']).toBe('globex');
  }, 60_000);
});

async function auditOfAcme(): Promise<Record<string, unknown>[]> {
  const log = s.gw.gateway.store.auditLog({ maxEventsPerStream: 10_000 });
  const entries = await log.read('tenant:acme', 0);
  return entries.map((e) => JSON.parse(e.event) as Record<string, unknown>);
}

describe('audit', () => {
  it('records the sign-in and the token as via the browser', async () => {
    const code = await codeFor('bea');
    expect((await redeem({ code, redirect_uri: appRedirect })).status).toBe(200);
    const events = (await auditOfAcme()).filter((e) => e['user_email'] === 'bea@acme.test');
    expect(events.slice(-2)).toMatchObject([
      { event: 'federated_sign_in', tenant_id: 'acme', issuer: idps.acme.issuer, via: 'browser' },
      { event: 'token_issued', tenant_id: 'acme', via: 'browser' },
    ]);
    expect(events.some((e) => e['event'] === 'federated_user_created')).toBe(true);
  }, 30_000);
});

describe('refused', () => {
  it('an unregistered redirect_uri: 400, no redirect', async () => {
    for (const uri of [
      'https://evil.example/signed-in',
      `${appRedirect}/x`,
      `${appRedirect}?x=1`,
      `${appRedirect}#f`,
      appRedirect.toUpperCase(),
    ]) {
      const res = await fetch(loginUrl({ redirect_uri: uri }), { redirect: 'manual' });
      expect(res.status, uri).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(((await res.json()) as { error: string }).error).toBe('invalid_request');
    }
    const none = await fetch(`${s.gw.url}/1/tenants/acme/sso/login`, { redirect: 'manual' });
    expect(none.status).toBe(400);
  });

  it('no challenge, one not S256 or not 43 characters, a method alone, a repeated redirect_uri: 400', async () => {
    const pkce = new URLSearchParams(PKCE).toString();
    for (const query of [
      // OAuth 2.1 (issue 42): a sign-in without PKCE is refused, not let through.
      '',
      `code_challenge=${'a'.repeat(42)}&code_challenge_method=S256`,
      `code_challenge=${'a'.repeat(43)}`,
      'code_challenge_method=S256',
      `${pkce}&redirect_uri=${encodeURIComponent(appRedirect)}`,
    ]) {
      const url = `${loginUrl({ redirect_uri: appRedirect }, false)}&${query}`;
      const res = await fetch(url, { redirect: 'manual' });
      expect(res.status, query).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(res.headers.get('set-cookie')).toBeNull();
    }
  });

  it('nothing without sso.enabled: 404, and the code grant is unsupported', async () => {
    const plain = await startMemoryIdentityFixture();
    try {
      const login = await fetch(
        `${plain.gw.url}/1/tenants/acme/sso/login?redirect_uri=${encodeURIComponent(appRedirect)}`,
        { redirect: 'manual' },
      );
      expect(login.status).toBe(404);
      const res = await redeemCode(plain.gw.url, { code: 'x', redirect_uri: appRedirect });
      await expectError(res, 400, 'unsupported_grant_type');
    } finally {
      await plain.close();
    }
  }, 30_000);

  it('too many sign-ins started from one address: 429, before any store write', async () => {
    const strict = await startTestGateway({
      ...s.fx.config,
      limits: { ssoLogin: { perIp: 2, windowSeconds: 600 } },
    });
    try {
      const url = `${strict.url}/1/tenants/acme/sso/login?redirect_uri=${encodeURIComponent(appRedirect)}`;
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await fetch(url, { redirect: 'manual' })).status);
      // This instance's own memory store has no IdP record for acme: 400 until the budget is spent.
      expect(statuses).toEqual([400, 400, 429]);
    } finally {
      await strict.close();
    }
  }, 30_000);

  it("the IdP's error goes back to the application with its state, and no code", async () => {
    const res = await fetch(loginUrl({ redirect_uri: appRedirect, state: 'app-2' }), {
      redirect: 'manual',
    });
    const state = new URL(res.headers.get('location') as string).searchParams.get('state');
    const cookie = (res.headers.getSetCookie()[0] as string).split(';')[0] as string;
    const back = await callback(
      `${s.gw.url}/1/sso/callback?state=${state as string}&error=access_denied`,
      cookie,
    );
    expect(back.status).toBe(302);
    const to = new URL(back.headers.get('location') as string);
    expect(`${to.origin}${to.pathname}`).toBe(appRedirect);
    expect(Object.fromEntries(to.searchParams)).toEqual({ error: 'access_denied', state: 'app-2' });
  });

  it('a plain PKCE challenge, or a tenant without an IdP: 400', async () => {
    const plain = await fetch(
      loginUrl({
        redirect_uri: appRedirect,
        code_challenge: 'x'.repeat(43),
        code_challenge_method: 'plain',
      }),
      { redirect: 'manual' },
    );
    expect(plain.status).toBe(400);
    await s.gw.gateway.store.tenants.upsertTenant(
      { tenantId: 'initech', type: 'orgtenant', name: 'Initech', cloudRegion: 'r', createdBy: 'x' },
      Math.floor(Date.now() / 1000),
    );
    const other = await fetch(
      `${s.gw.url}/1/tenants/initech/sso/login?${new URLSearchParams({ redirect_uri: appRedirect, ...PKCE })}`,
      { redirect: 'manual' },
    );
    expect(other.status).toBe(400);
    expect(other.headers.get('location')).toBeNull();
  });

  it('the IdP redirect carries PKCE S256, state, nonce and the gateway callback', async () => {
    const res = await fetch(loginUrl({ redirect_uri: appRedirect }), { redirect: 'manual' });
    const to = new URL(res.headers.get('location') as string);
    expect(to.href.startsWith(idps.acme.issuer)).toBe(true);
    const q = to.searchParams;
    expect(q.get('response_type')).toBe('code');
    expect(q.get('client_id')).toBe(ACME_CLIENT.clientId);
    expect(q.get('redirect_uri')).toBe(`${s.gw.url}/1/sso/callback`);
    expect(q.get('scope')).toBe('openid email profile');
    expect(q.get('code_challenge_method')).toBe('S256');
    expect(q.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.get('state')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.get('nonce')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('a replayed or altered state: 400, no redirect', async () => {
    const url = await throughIdp(loginUrl({ redirect_uri: appRedirect }), 'bea');
    const altered = new URL(url);
    altered.searchParams.set('state', `${altered.searchParams.get('state') as string}x`);
    const bad = await callback(altered.href);
    expect(bad.status).toBe(400);
    expect(bad.headers.get('location')).toBeNull();
    const first = await callback(url);
    expect(first.status).toBe(302);
    expect(first.headers.getSetCookie()[0]).toMatch(/Max-Age=0/);
    const again = await callback(url);
    expect(again.status).toBe(400);
    expect(again.headers.get('location')).toBeNull();
  }, 30_000);

  it("a callback from another browser (no binding cookie, or another sign-in's): 400, state spent", async () => {
    const url = await throughIdp(loginUrl({ redirect_uri: appRedirect }), 'bea');
    const mine = lastBinding;
    await throughIdp(loginUrl({ redirect_uri: appRedirect }), 'bea');
    const other = lastBinding.split('=')[1] as string;
    for (const cookie of ['', `${mine.split('=')[0] as string}=${other}`]) {
      const res = await callback(url, cookie);
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
    }
    expect((await callback(url, mine)).status).toBe(400);
  }, 30_000);

  it('a code redeemed twice: the second is invalid_grant', async () => {
    const code = await codeFor('bea');
    expect((await redeem({ code, redirect_uri: appRedirect })).status).toBe(200);
    const again = await redeem({ code, redirect_uri: appRedirect });
    expect(again.status).toBe(400);
    expect(((await again.json()) as { error: string }).error).toBe('invalid_grant');
  }, 30_000);

  it('one callback followed many times at once: one code for the application, the rest 400', async () => {
    const url = await throughIdp(loginUrl({ redirect_uri: appRedirect }), 'bea');
    const answers = await Promise.all(Array.from({ length: 10 }, () => callback(url)));
    const won = answers.filter((r) => r.status === 302);
    expect(won).toHaveLength(1);
    expect(new URL(won[0]?.headers.get('location') as string).searchParams.get('code')).toEqual(
      expect.any(String),
    );
    for (const res of answers.filter((r) => r.status !== 302)) {
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
    }
  }, 30_000);

  it('one code redeemed many times at once: one token, the rest invalid_grant', async () => {
    const code = await codeFor('bea');
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => redeem({ code, redirect_uri: appRedirect })),
    );
    expect(answers.filter((r) => r.status === 200)).toHaveLength(1);
    for (const res of answers.filter((r) => r.status !== 200)) {
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toBe('invalid_grant');
    }
  }, 30_000);

  it('a code redeemed with another redirect_uri: invalid_grant', async () => {
    const code = await codeFor('bea');
    const res = await redeem({ code, redirect_uri: `${appRedirect}/other` });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe('invalid_grant');
  }, 30_000);

  it('a wrong or missing code_verifier: invalid_grant (RFC 7636 §4.6), and the code is spent', async () => {
    const wrong = await redeem({
      code: await codeFor('bea'),
      redirect_uri: appRedirect,
      code_verifier: randomBytes(32).toString('base64url'),
    });
    const missingCode = await codeFor('bea');
    const missing = await redeemCode(s.gw.url, { code: missingCode, redirect_uri: appRedirect });
    for (const res of [wrong, missing]) {
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toBe('invalid_grant');
    }
    // The right verifier after a refused attempt: the code was single use.
    const late = await redeem({ code: missingCode, redirect_uri: appRedirect });
    expect(late.status).toBe(400);
  }, 60_000);

  it('a sign-in without PKCE (issue 42): 400 at the start, no redirect, no pending sign-in', async () => {
    for (const query of [
      { redirect_uri: appRedirect } as Record<string, string>,
      { redirect_uri: appRedirect, code_challenge: s256(VERIFIER) },
      { redirect_uri: appRedirect, code_challenge: s256(VERIFIER), code_challenge_method: 'plain' },
    ]) {
      const res = await fetch(loginUrl(query, false), { redirect: 'manual' });
      expect(res.status, JSON.stringify(query)).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(res.headers.get('set-cookie')).toBeNull();
      expect(((await res.json()) as { error: string }).error).toBe('invalid_request');
    }
  });

  it('an unverified e-mail at the IdP: invalid_grant at the callback, no code', async () => {
    const res = await callback(await throughIdp(loginUrl({ redirect_uri: appRedirect }), 'una'));
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    expect(((await res.json()) as { error: string }).error).toBe('invalid_grant');
  }, 30_000);

  it('a nonce altered on the way to the IdP: invalid_grant at the callback, audited', async () => {
    const url = await throughIdp(loginUrl({ redirect_uri: appRedirect }), 'bea', (toIdp) =>
      toIdp.searchParams.set('nonce', 'chosen-by-an-attacker'),
    );
    const res = await callback(url);
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    expect(((await res.json()) as { error: string }).error).toBe('invalid_grant');
    const events = await auditOfAcme();
    expect(events.at(-1)).toMatchObject({
      event: 'federated_sign_in_refused',
      tenant_id: 'acme',
      user_email: 'bea@acme.test',
      issuer: idps.acme.issuer,
      reason: 'nonce',
      via: 'browser',
    });
  }, 30_000);

  it('a made-up code: invalid_grant', async () => {
    const res = await redeem({ code: 'made-up', redirect_uri: appRedirect });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe('invalid_grant');
  });
});
