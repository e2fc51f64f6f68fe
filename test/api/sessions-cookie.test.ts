/**
 * Issue 44, a user's own sessions through the API with the session cookie
 * (`sessions.enabled`) on a running gateway (in-memory store), browser
 * sessions begun by the core's `browserSessions.start` as the sign-in page
 * begins them: both kinds listed with `current` from the cookie, the CSRF
 * rule on DELETE (cross-site, no Fetch Metadata nor Origin, a sibling site:
 * 403 `csrf_refused`, nothing ended), a cookie sent twice or forged refused,
 * a browser session ended with its cookie dead, and another user's browser
 * session answered as an unknown one and left alive.
 */
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic, bearer } from '../support/gateway.js';
import { expectError } from '../support/expect-error.js';
import {
  ALICE,
  BOB,
  startMemoryIdentityFixture,
  type IdentityFixture,
} from '../support/identity-fixture.js';

/** `sessions.cookie.secure: false` (a plain-HTTP trial): no `__Host-` prefix. */
const COOKIE = 'tg_session';

let fx: IdentityFixture;
let url: string;

beforeAll(async () => {
  fx = await startMemoryIdentityFixture({
    tokens: { refresh: { enabled: true } },
    sessions: { enabled: true, cookie: { secure: false } },
  });
  url = fx.gw.url;
});
afterAll(() => fx.close());

interface Listed {
  session_id: string;
  kind: string;
  tenant_id: string;
  user_agent: string | null;
  ip: string | null;
  current: boolean;
}

async function login(who: { email: string; password: string }) {
  const res = await fetch(`${url}/1/token?tenant_id=acme`, {
    headers: { authorization: basic(who.email, who.password) },
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { access_token: string; user_id: string };
  return { ...body, fid: decodeJwt(body.access_token).fid as string };
}

/** A browser session of `userId` at acme, as a sign-in begins one: its id and cookie value. */
async function signIn(userId: string, userAgent = 'Mozilla/5.0 Firefox/140.0') {
  const started = await fx.gw.gateway.browserSessions.start({
    userId,
    tenantId: 'acme',
    userAgent,
    ip: '203.0.113.9',
  });
  return { sessionId: started.session.sessionId, cookie: `${COOKIE}=${started.cookieValue}` };
}

const withCookie = (cookie: string, headers: Record<string, string> = {}) => ({
  headers: { cookie, ...headers },
});

const list = (init: RequestInit) => fetch(`${url}/1/sessions`, init);

async function listed(init: RequestInit): Promise<Listed[]> {
  const res = await list(init);
  expect(res.status, await res.clone().text()).toBe(200);
  return ((await res.json()) as { sessions: Listed[] }).sessions;
}

const end = (sessionId: string, init: RequestInit) =>
  fetch(`${url}/1/sessions/${encodeURIComponent(sessionId)}`, { method: 'DELETE', ...init });

describe('GET /1/sessions with the session cookie', () => {
  it('lists both kinds, the cookie’s own session marked current', async () => {
    const token = await login(ALICE);
    const browser = await signIn(token.user_id);
    const sessions = await listed(withCookie(browser.cookie));
    expect(sessions.find((s) => s.session_id === browser.sessionId)).toEqual({
      session_id: browser.sessionId,
      kind: 'browser',
      tenant_id: 'acme',
      created_at: expect.any(Number),
      last_seen_at: expect.any(Number),
      user_agent: 'Mozilla/5.0 Firefox/140.0',
      ip: '203.0.113.9',
      current: true,
    });
    expect(sessions.find((s) => s.session_id === token.fid)).toMatchObject({
      kind: 'refresh',
      current: false,
    });
    expect(sessions.filter((s) => s.current)).toHaveLength(1);
    // The cookie's value is never answered.
    expect(JSON.stringify(sessions)).not.toContain(browser.cookie.split('=')[1]);

    // By bearer, the token's family is current, not the browser session.
    const byBearer = await listed({ headers: { authorization: bearer(token.access_token) } });
    expect(byBearer.find((s) => s.current)?.session_id).toBe(token.fid);
  });

  it('refuses a cookie sent twice (cookie tossing), a forged one, or one of another name', async () => {
    const { user_id: userId } = await login(ALICE);
    const one = await signIn(userId);
    const two = await signIn(userId);
    await expectError(await list(withCookie(`${one.cookie}; ${two.cookie}`)), 401, 'invalid_token');
    await expectError(
      await list({ headers: { cookie: [one.cookie, one.cookie].join('; ') } }),
      401,
      'invalid_token',
    );
    const [, value] = one.cookie.split('=') as [string, string];
    const forged = `${COOKIE}=${value.slice(0, -2)}${value.endsWith('AA') ? 'BB' : 'AA'}`;
    await expectError(await list(withCookie(forged)), 401, 'invalid_token');
    await expectError(await list(withCookie(`other=${value}`)), 401, 'invalid_token');
  });
});

describe('DELETE /1/sessions/{id} with the session cookie', () => {
  const crossSite: [string, Record<string, string>][] = [
    ['Sec-Fetch-Site: cross-site', { 'sec-fetch-site': 'cross-site' }],
    ['Sec-Fetch-Site: same-site (a sibling host)', { 'sec-fetch-site': 'same-site' }],
    ['Sec-Fetch-Site: none', { 'sec-fetch-site': 'none' }],
    ['neither Fetch Metadata nor Origin', {}],
    ['another Origin', { origin: 'http://evil.example' }],
    ['Origin: null', { origin: 'null' }],
    [
      'a same-origin Origin under a cross-site Fetch Metadata',
      { 'sec-fetch-site': 'cross-site', origin: 'http://127.0.0.1' },
    ],
  ];

  it.each(crossSite)('refuses %s: 403 csrf_refused, and nothing ends', async (_name, headers) => {
    const token = await login(ALICE);
    const browser = await signIn(token.user_id);
    for (const target of [token.fid, browser.sessionId]) {
      await expectError(
        await end(target, withCookie(browser.cookie, headers)),
        403,
        'csrf_refused',
      );
    }
    const ids = (await listed(withCookie(browser.cookie))).map((s) => s.session_id);
    expect(ids).toEqual(expect.arrayContaining([token.fid, browser.sessionId]));
    expect(
      (
        await fetch(`${url}/1/tenants/current`, {
          headers: { authorization: bearer(token.access_token) },
        })
      ).status,
    ).toBe(200);
  });

  it('ends a session from the same origin (Fetch Metadata, or Origin)', async () => {
    const token = await login(ALICE);
    const other = await login(ALICE);
    const browser = await signIn(token.user_id);
    const sameOrigin = { 'sec-fetch-site': 'same-origin' };
    expect((await end(token.fid, withCookie(browser.cookie, sameOrigin))).status).toBe(204);
    await expectError(
      await fetch(`${url}/1/tenants/current`, {
        headers: { authorization: bearer(token.access_token) },
      }),
      401,
      'invalid_token',
    );
    const origin = { origin: new URL(url).origin };
    expect((await end(other.fid, withCookie(browser.cookie, origin))).status).toBe(204);
    const ids = (await listed(withCookie(browser.cookie))).map((s) => s.session_id);
    expect(ids).not.toContain(token.fid);
    expect(ids).not.toContain(other.fid);
  });

  it('ends its own browser session: the cookie is refused from then on', async () => {
    const { user_id: userId } = await login(ALICE);
    const browser = await signIn(userId);
    const kept = await signIn(userId);
    const sameOrigin = { 'sec-fetch-site': 'same-origin' };
    expect((await end(browser.sessionId, withCookie(browser.cookie, sameOrigin))).status).toBe(204);
    await expectError(await list(withCookie(browser.cookie)), 401, 'invalid_token');
    const ids = (await listed(withCookie(kept.cookie))).map((s) => s.session_id);
    expect(ids).toContain(kept.sessionId);
    expect(ids).not.toContain(browser.sessionId);
  });

  it("answers another user's browser session as an unknown one, and ends nothing", async () => {
    const alice = await login(ALICE);
    const bob = await login(BOB);
    const bobs = await signIn(bob.user_id);
    const alices = await signIn(alice.user_id);
    const sameOrigin = { 'sec-fetch-site': 'same-origin' };
    const byCookie = await end(bobs.sessionId, withCookie(alices.cookie, sameOrigin));
    const byBearer = await end(bobs.sessionId, {
      headers: { authorization: bearer(alice.access_token) },
    });
    const unknown = await end('ses_nobody', withCookie(alices.cookie, sameOrigin));
    const bodies = [];
    for (const res of [byCookie, byBearer, unknown])
      bodies.push(JSON.stringify(await expectError(res, 404, 'not_found')));
    expect(new Set(bodies).size).toBe(1);
    const bobsView = await listed(withCookie(bobs.cookie));
    expect(bobsView.find((s) => s.current)?.session_id).toBe(bobs.sessionId);
  });

  it('a bearer token is judged by itself, whatever cookie comes along: no CSRF rule', async () => {
    const token = await login(ALICE);
    const other = await login(ALICE);
    const browser = await signIn(token.user_id);
    const res = await end(other.fid, {
      headers: {
        authorization: bearer(token.access_token),
        cookie: browser.cookie,
        'sec-fetch-site': 'cross-site',
      },
    });
    expect(res.status).toBe(204);
  });
});
