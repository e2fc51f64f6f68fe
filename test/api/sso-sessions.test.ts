/**
 * Issue 44: people signing in with their company's IdP into a browser
 * session, and the logouts that come from the IdP's side. `oidc-provider`
 * over HTTPS is acme's and globex's IdP (their client secrets set through the
 * admins' API, sealed); a running gateway on the memory store with
 * `sessions.enabled`.
 *
 * - `GET /1/sign-in/sso?email=…&return_to=…` goes to the IdP of the tenant that
 *   verified the e-mail's domain, and the callback ends in a session cookie
 *   for that tenant and user, remembering the IdP (issuer, `sub`, `sid`);
 *   a domain nobody verified asks no IdP.
 * - `POST /1/sso/backchannel-logout`: ending the session at oidc-provider
 *   makes it post its own logout token, which ends the person's IdP sessions
 *   and not their other session; then tokens minted with the IdP's own
 *   signing key (its private JWK), valid and hostile: every hostile one is a
 *   400 `invalid_request` and ends nothing.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importJWK, SignJWT, type JWK, type JWTPayload } from 'jose';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserSessionRecord } from '../../src/store/browser-sessions.js';
import type { Store } from '../../src/store/types.js';
import { fixtureSuite } from '../support/fixture-suite.js';
import type { TestIdp } from '../support/oidc-idp.js';
import { callback, throughIdp } from '../support/sso-sign-in.js';
import { loopbackSso, useTestIdps } from '../support/test-idps.js';
import { ACME_CLIENT, GLOBEX_CLIENT } from '../support/token-exchange.js';
import { setCompanyIdps } from '../support/company-idps.js';

const LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';
const COOKIE = 'tg_session';

let keyDir: string;
let keyFile: string;
let idpAgent: Agent;

const idps = useTestIdps({
  acme: {
    alg: 'RS256',
    clients: [ACME_CLIENT],
    accounts: { ann: 'ann@acme.test', amy: 'amy@acme.test', abe: 'abe@acme.test' },
  },
  globex: { alg: 'ES256', clients: [GLOBEX_CLIENT], accounts: { gus: 'gus@globex.test' } },
});

beforeAll(() => {
  idpAgent = new Agent({ connect: { ca: idps.ca.ca } });
  keyDir = mkdtempSync(join(tmpdir(), 'tg-sso-sessions-'));
  keyFile = join(keyDir, 'sso.key');
  writeFileSync(keyFile, `${randomBytes(32).toString('base64')}\n`);
});
afterAll(async () => {
  await idpAgent?.close();
  if (keyDir !== undefined) rmSync(keyDir, { recursive: true, force: true });
});

const s = fixtureSuite({}, () => ({
  sso: loopbackSso(idps.ca, { secretsKeyFile: keyFile }),
  sessions: { enabled: true, cookie: { secure: false } },
  limits: {
    exchange: { perIp: 10_000, windowSeconds: 60 },
    ssoLogin: { perIp: 10_000, windowSeconds: 600 },
  },
}));

const store = (): Store => s.gw.gateway.store;

beforeAll(async () => {
  for (const idp of [idps.acme, idps.globex]) {
    idp.allowRedirectUri(`${s.gw.url}/1/sso/callback`);
    idp.setBackchannelLogoutUri(`${s.gw.url}/1/sso/backchannel-logout`);
  }
  await setCompanyIdps(s.gw.url, store(), idps);
}, 60_000);

const signInUrl = (query: Record<string, string>) =>
  `${s.gw.url}/1/sign-in/sso?${new URLSearchParams(query)}`;

interface SignedIn {
  res: Response;
  /** The session cookie's value (`<ses_id>.<secret>`). */
  cookieValue: string;
  sessionId: string;
  /** The IdP's cookies of this browser: its session there. */
  idpCookies: string;
}

/** A whole company sign-in by fetch, from the sign-in page's form to the callback's answer. */
async function signIn(
  account: string,
  query: Record<string, string> = { email: `${account}@acme.test`, return_to: '/orders/7?x=1' },
  idp: TestIdp = idps.acme,
): Promise<SignedIn> {
  const started = await throughIdp({
    gatewayUrl: s.gw.url,
    issuer: idp.issuer,
    agent: idpAgent,
    start: signInUrl(query),
    account,
  });
  const res = await callback(started.callbackUrl, started.cookie);
  const line = res.headers.getSetCookie().find((c) => c.startsWith(`${COOKIE}=`)) ?? '';
  const cookieValue = line.slice(COOKIE.length + 1).split(';')[0] as string;
  return {
    res,
    cookieValue,
    sessionId: cookieValue.split('.')[0] as string,
    idpCookies: started.idpCookies,
  };
}

const session = (id: string) => store().browserSessions.getBrowserSession(id);

async function userId(email: string): Promise<string> {
  return ((await store().users.findUserByEmail(email)) as { id: string }).id;
}

describe('sign-in with the company IdP into a browser session', () => {
  it("ends in a session cookie for the tenant that verified the e-mail's domain, remembering the IdP", async () => {
    const { res, cookieValue, sessionId } = await signIn('ann');
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/orders/7?x=1');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const line = res.headers.getSetCookie().find((c) => c.startsWith(`${COOKIE}=`));
    expect(line).toMatch(/; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax$/);
    expect(cookieValue).toMatch(/^ses_[^.]+\.[^.]+$/);
    const record = (await session(sessionId)) as BrowserSessionRecord;
    expect(record).toMatchObject({
      tenantId: 'acme',
      userId: await userId('ann@acme.test'),
      email: 'ann@acme.test',
      idp: { issuer: idps.acme.issuer, subject: 'ann' },
    });
    // Back-channel logout with `sid` is registered: the ID token carried one.
    expect(record.idp?.sid).toEqual(expect.any(String));
  });

  it('signs in by tenant_id too, and for globex at globex’s own IdP', async () => {
    const { res, sessionId } = await signIn(
      'gus',
      { tenant_id: 'globex', return_to: '/' },
      idps.globex,
    );
    expect(res.status).toBe(303);
    expect(await session(sessionId)).toMatchObject({
      tenantId: 'globex',
      idp: { issuer: idps.globex.issuer, subject: 'gus' },
    });
  });

  it('returns only to a path on the gateway: //host, /\\host, a URL, a control character become /', async () => {
    for (const returnTo of [
      '//evil.example/x',
      '/\\evil.example',
      'https://evil.example/',
      '/a\tb',
    ]) {
      const { res } = await signIn('ann', { email: 'ann@acme.test', return_to: returnTo });
      expect(res.status, returnTo).toBe(303);
      expect(res.headers.get('location'), returnTo).toBe('/');
    }
  });

  it('asks no IdP for a domain no tenant has verified: back to the sign-in page', async () => {
    const before = idps.globex.requests.get('/auth') ?? 0;
    await store().domains.removeTenantDomain('globex', 'globex.test');
    try {
      for (const email of ['gus@globex.test', 'someone@nowhere.test', 'not-an-address']) {
        const res = await fetch(signInUrl({ email, return_to: '/orders' }), {
          redirect: 'manual',
        });
        expect(res.status, email).toBe(303);
        expect(res.headers.get('location'), email).toBe(
          '/1/sign-in?return_to=%2Forders&error=no_company_sign_in',
        );
        expect(res.headers.getSetCookie(), email).toEqual([]);
      }
      expect(idps.globex.requests.get('/auth') ?? 0).toBe(before);
    } finally {
    }
  });
});

/** A logout token signed with `key` (default: acme's IdP's own signing key). */
async function mint(
  claims: JWTPayload,
  options: { key?: JWK; alg?: string; typ?: string; kid?: string } = {},
): Promise<string> {
  const jwk = options.key ?? (idps.acme.keys[0] as JWK);
  const alg = options.alg ?? (jwk.kty === 'EC' ? 'ES256' : 'RS256');
  const header = { alg, typ: options.typ ?? 'logout+jwt', kid: options.kid ?? (jwk.kid as string) };
  return new SignJWT(claims).setProtectedHeader(header).sign(await importJWK(jwk, alg));
}

/** The claims of a valid logout token of acme's IdP, `over` merged (undefined values dropped). */
function claims(over: Record<string, unknown> = {}): JWTPayload {
  const now = Math.floor(Date.now() / 1000);
  const all: Record<string, unknown> = {
    iss: idps.acme.issuer,
    aud: ACME_CLIENT.clientId,
    iat: now,
    exp: now + 120,
    jti: randomUUID(),
    events: { [LOGOUT_EVENT]: {} },
    sub: 'ann',
    ...over,
  };
  return Object.fromEntries(Object.entries(all).filter(([, v]) => v !== undefined));
}

function postLogout(body: Record<string, string>): Promise<Response> {
  return fetch(`${s.gw.url}/1/sso/backchannel-logout`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(body).toString(),
  });
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('back-channel logout', () => {
  it("ends the person's IdP sessions when they sign out at the IdP, and not their other session", async () => {
    const first = await signIn('amy');
    const second = await signIn('amy');
    const amy = await userId('amy@acme.test');
    // A session of amy's not begun at an IdP, as a password sign-in writes it.
    const other = { ...((await session(first.sessionId)) as BrowserSessionRecord) };
    delete other.idp;
    other.sessionId = `ses_${randomBytes(16).toString('base64url')}`;
    await store().browserSessions.createBrowserSession(other);

    // oidc-provider posts its logout token to the gateway before it answers.
    await idps.acme.endSession(first.idpCookies);

    expect(await session(first.sessionId)).toBeNull();
    // Another IdP session of amy's (its own `sid`) is not the one that ended.
    expect(await session(second.sessionId)).not.toBeNull();
    expect(await session(other.sessionId)).not.toBeNull();
    const audit = await store().auditLog({ maxEventsPerStream: 10_000 }).read('tenant:acme', 0);
    const logout = audit
      .map((entry) => JSON.parse(entry.event) as Record<string, unknown>)
      .find((event) => event['event'] === 'backchannel_logout');
    expect(logout).toMatchObject({
      user_id: amy,
      issuer: idps.acme.issuer,
      sessions_ended: 1,
      tenant_id: 'acme',
    });
    expect(JSON.stringify(audit)).not.toContain('logout_token');
  });

  it('ends every IdP session of the person for a token without sid; 200, never cached', async () => {
    const one = await signIn('abe');
    const two = await signIn('abe');
    const res = await postLogout({ logout_token: await mint(claims({ sub: 'abe' })) });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await session(one.sessionId)).toBeNull();
    expect(await session(two.sessionId)).toBeNull();
  });

  it('refuses every hostile or broken token with 400 invalid_request, ending nothing', async () => {
    const ann = await signIn('ann');
    const record = (await session(ann.sessionId)) as BrowserSessionRecord;
    const sid = record.idp?.sid as string;
    const globexKey = idps.globex.keys[0] as JWK;
    const acmeKid = idps.acme.keys[0]?.kid as string;
    const now = Math.floor(Date.now() / 1000);
    const valid = claims({ sid });
    const [header, payload, signature] = (await mint(valid)).split('.') as [string, string, string];
    const cases: Record<string, string> = {
      "signed by globex's IdP, claiming acme's issuer": await mint(valid, { key: globexKey }),
      "signed by globex's IdP under acme's kid": await mint(valid, {
        key: globexKey,
        kid: acmeKid,
      }),
      'aud not the record’s client': await mint(claims({ sid, aud: 'someone-else' })),
      "aud globex's client at acme's issuer": await mint(
        claims({ sid, aud: GLOBEX_CLIENT.clientId }),
      ),
      'without events': await mint(claims({ sid, events: undefined })),
      'events without the logout member': await mint(claims({ sid, events: { other: {} } })),
      'the logout member not an object': await mint(
        claims({ sid, events: { [LOGOUT_EVENT]: true } }),
      ),
      'with a nonce': await mint(claims({ sid, nonce: 'n-1' })),
      'without sub and sid': await mint(claims({ sub: undefined })),
      'without jti': await mint(claims({ sid, jti: undefined })),
      'without iat': await mint(claims({ sid, iat: undefined })),
      'iat in the future': await mint(claims({ sid, iat: now + 600, exp: now + 900 })),
      'iat 20 minutes ago': await mint(claims({ sid, iat: now - 1200, exp: now + 60 })),
      expired: await mint(claims({ sid, iat: now - 300, exp: now - 120 })),
      'alg none': `${b64({ alg: 'none', typ: 'logout+jwt' })}.${payload}.`,
      HS256: await new SignJWT(valid)
        .setProtectedHeader({ alg: 'HS256', kid: acmeKid })
        .sign(new TextEncoder().encode('x'.repeat(32))),
      'a bad signature': `${header}.${b64({ ...valid, sub: 'amy' })}.${signature}`,
      'an access token (typ at+jwt)': await mint(valid, { typ: 'at+jwt' }),
      'not a JWT': 'not-a-jwt',
    };
    for (const [name, token] of Object.entries(cases)) {
      const res = await postLogout({ logout_token: token });
      expect(res.status, name).toBe(400);
      expect(((await res.json()) as { error: string }).error, name).toBe('invalid_request');
      expect(await session(ann.sessionId), name).not.toBeNull();
    }
    const missing = await postLogout({});
    expect(missing.status).toBe(400);
    expect(await session(ann.sessionId)).not.toBeNull();
  });

  it('refuses a replayed jti: the second delivery ends nothing', async () => {
    const token = await mint(claims({ sub: 'nobody-here' }));
    expect((await postLogout({ logout_token: token })).status).toBe(200);
    const ann = await signIn('ann');
    // The same jti again, now naming ann: refused before anyone is looked up.
    const again = await mint(
      claims({
        jti: JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString()).jti,
      }),
    );
    const replayed = await postLogout({ logout_token: again });
    expect(replayed.status).toBe(400);
    expect(((await replayed.json()) as { error: string }).error).toBe('invalid_request');
    expect(await session(ann.sessionId)).not.toBeNull();
  });

  it("ends nothing for a valid token of another tenant's IdP naming our user's sub, nor for another sid", async () => {
    const ann = await signIn('ann');
    const globex = await mint(
      claims({ iss: idps.globex.issuer, aud: GLOBEX_CLIENT.clientId, sub: 'ann' }),
      { key: idps.globex.keys[0] as JWK },
    );
    expect((await postLogout({ logout_token: globex })).status).toBe(200);
    expect(await session(ann.sessionId)).not.toBeNull();
    const otherSid = await mint(claims({ sid: 'not-this-session' }));
    expect((await postLogout({ logout_token: otherSid })).status).toBe(200);
    expect(await session(ann.sessionId)).not.toBeNull();
    const sid = ((await session(ann.sessionId)) as BrowserSessionRecord).idp?.sid as string;
    // A token naming only the sid finds the person by it.
    expect(
      (await postLogout({ logout_token: await mint(claims({ sub: undefined, sid })) })).status,
    ).toBe(200);
    expect(await session(ann.sessionId)).toBeNull();
  });
});
