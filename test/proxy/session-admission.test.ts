/**
 * Issue 44: `auth: session` routes, end to end — a real gateway (memory
 * store), a real echo upstream and a real WebSocket upstream, sessions begun
 * by the gateway's own browser sessions service (as the sign-in page begins
 * them). The session cookie admits on every entry way (proxied HTTP, a
 * WebSocket upgrade, forward-auth's `/auth/verify`) with the identity a user's
 * token gives; a bearer token still works there and wins beside the cookie; a
 * page load without a session is sent to sign in (302), anything else gets
 * 401; an unsafe method or an upgrade with the cookie must come from the same
 * origin (403 `csrf_refused`); the session cookie never reaches the upstream,
 * the other cookies do, in order; an `auth: bearer` route never reads it; the
 * request counter names the principal `session`.
 */
import { describe, expect, it } from 'vitest';
import { fixtureSuite } from '../support/fixture-suite.js';
import { adminUrlOf, bearer } from '../support/gateway.js';
import { ALICE, BOB } from '../support/identity-fixture.js';
import { lineOf } from '../support/log-lines.js';
import { scrape, total } from '../support/prometheus-text.js';
import { rawUpgrade } from '../support/raw-upgrade.js';
import { cookiePair, hiddenField, postForm } from '../support/sign-in-page.js';
import { startEchoUpstream, startUpstream, startWebSocketUpstream } from '../support/upstream.js';

const NAME = '__Host-tg_session';

/**
 * An upstream that sets, besides its own cookie, the gateway's session and
 * pre-session cookies in every spelling a browser would take: a session of
 * its choosing planted in the user's browser (fixation), or a second one.
 */
const PLANTED = [
  `${NAME}=planted; Path=/; Secure; HttpOnly`,
  `__HOST-TG_SESSION=planted; Path=/; Secure`,
  ` __Host-tg_signin =planted; Path=/; Secure`,
  `=${NAME}=planted; Path=/; Secure`,
  'app=1; Path=/',
];
const startCookieSetter = () =>
  startUpstream((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'set-cookie': PLANTED }).end('ok'));
  });

const s = fixtureSuite(
  { echo: startEchoUpstream, sockets: startWebSocketUpstream, setter: startCookieSetter },
  ({ echo, sockets, setter }) => ({
    sessions: { enabled: true },
    routes: [
      { prefix: '/app', upstream: echo.url, auth: 'session' },
      { prefix: '/live', upstream: sockets.url, auth: 'session' },
      { prefix: '/api', upstream: echo.url },
      { prefix: '/open', upstream: setter.url, auth: 'none' },
    ],
  }),
  { logged: true, token: true },
);

/** A new session of Alice's for acme, begun as the sign-in page begins one: its cookie's value. */
async function signedIn(): Promise<string> {
  const store = s.gw.gateway.store;
  const alice = await store.users.findUserByEmail(ALICE.email);
  const started = await s.gw.gateway.browserSessions.start({
    userId: alice?.id as string,
    tenantId: 'acme',
    userAgent: 'vitest',
    ip: '127.0.0.1',
  });
  return started.cookieValue;
}

interface Seen {
  status: number;
  location: string | null;
  body: string;
  headers: Headers;
}

async function get(path: string, headers: Record<string, string>, method = 'GET'): Promise<Seen> {
  const res = await fetch(`${s.gw.url}${path}`, { method, headers, redirect: 'manual' });
  return {
    status: res.status,
    location: res.headers.get('location'),
    body: await res.text(),
    headers: res.headers,
  };
}

/** What the echo upstream received. */
const echoed = (seen: Seen) =>
  (JSON.parse(seen.body) as { headers: Record<string, string | undefined> }).headers;

const errorOf = (seen: Seen) => (JSON.parse(seen.body) as { error: string }).error;

describe('the session cookie admits', () => {
  it('a proxied request, with the identity a user token gives, the cookie not forwarded', async () => {
    const value = await signedIn();
    const seen = await get('/app/page', { cookie: `a=1; ${NAME}=${value}; b=2` });
    expect(seen.status).toBe(200);
    const headers = echoed(seen);
    expect(headers).toMatchObject({
      'x-tenant-id': 'acme',
      'x-tenant-type': 'orgtenant',
      'x-user-email': ALICE.email,
      cookie: 'a=1; b=2',
    });
    expect(headers['x-user-id']).toMatch(/\S/);
    expect(headers['x-client-id']).toBeUndefined();
    expect(seen.body).not.toContain(value);
    expect(await lineOf(s.lines, seen.headers.get('x-request-id'))).toMatchObject({
      status: 200,
      tenantId: 'acme',
    });
  });

  it('drops a Cookie left empty, and counts the request as principal="session"', async () => {
    const count = async () =>
      total(await scrape(adminUrlOf(s.gw)), 'tenant_gateway_requests_total', {
        principal: 'session',
      });
    const before = await count();
    const seen = await get('/app/x', { cookie: `${NAME}=${await signedIn()}` });
    expect(seen.status).toBe(200);
    expect(echoed(seen)).not.toHaveProperty('cookie');
    expect(await count()).toBe(before + 1);
  });

  it('a WebSocket upgrade from the same origin; refused without it (csrf_refused)', async () => {
    const cookie = `Cookie: ${NAME}=${await signedIn()}; other=1`;
    const head = await rawUpgrade(s.gw.url, '/live/ws', [cookie, 'Origin: http://gw'], 'head');
    expect(head).toMatch(/^HTTP\/1\.1 101 /);
    const upgrade = s.up.sockets.upgrades.at(-1);
    expect(upgrade?.['x-tenant-id']).toBe('acme');
    expect(upgrade?.cookie).toBe('other=1');
    for (const origin of [[], ['Origin: https://evil.test'], ['Origin: null']]) {
      const refused = await rawUpgrade(s.gw.url, '/live/ws', [cookie, ...origin], 'close');
      expect(refused).toMatch(/^HTTP\/1\.1 403 /);
      expect(refused).toContain('"error":"csrf_refused"');
    }
  });

  it("forward-auth's /auth/verify: 200 with the identity, and the Cookie to forward without it", async () => {
    const value = await signedIn();
    const seen = await get('/auth/verify', {
      cookie: `a=1; ${NAME}=${value}`,
      'x-original-uri': '/app/page',
    });
    expect(seen.status).toBe(200);
    expect(seen.headers.get('x-tenant-id')).toBe('acme');
    expect(seen.headers.get('x-user-email')).toBe(ALICE.email);
    expect(seen.headers.get('cookie')).toBe('a=1');
  });
});

describe("the sign-in page's pre-session cookie", () => {
  const PRE = '__Host-tg_signin';

  it('never reaches an upstream: with it, a sign-in waiting for its tenant choice is finished by anyone', async () => {
    // Bob (acme and globex) has proven his password on the page and is choosing a tenant.
    const page = await fetch(`${s.gw.url}/1/sign-in?return_to=%2Fapp`);
    const pre = cookiePair(page, PRE);
    const token = hiddenField(await page.text(), 'csrf_token') as string;
    const posted = await postForm(
      s.gw.url,
      '/1/sign-in',
      { csrf_token: token, return_to: '/app', ...BOB },
      { cookie: pre },
    );
    expect(await posted.text()).toContain('name="tenant_id"');
    // Meanwhile another tab of the app makes its requests, the page's cookie with them.
    const session = `${NAME}=${await signedIn()}`;
    const proxied = await get('/app/page', { cookie: `a=1; ${session}; ${pre}; b=2` });
    expect(proxied.status).toBe(200);
    expect(echoed(proxied).cookie).toBe('a=1; b=2');
    const open = await get('/api/page', { authorization: bearer(s.token), cookie: pre });
    expect(echoed(open)).not.toHaveProperty('cookie');
    const verified = await get('/auth/verify', {
      cookie: `${session}; ${pre}`,
      'x-original-uri': '/app/page',
    });
    expect(verified.status).toBe(200);
    expect(verified.headers.get('cookie')).toBe('');
  });
});

describe('a bearer token on a session route', () => {
  it('still admits, and wins beside a cookie (even a forged one)', async () => {
    const alone = await get('/app/x', { authorization: bearer(s.token) });
    expect(alone.status).toBe(200);
    expect(echoed(alone)['x-user-email']).toBe(ALICE.email);
    const beside = await get('/app/x', {
      authorization: bearer(s.token),
      cookie: `${NAME}=ses_forged.x; ${NAME}=ses_two.y`,
      accept: 'text/html',
    });
    expect(beside.status).toBe(200);
    expect(echoed(beside)).not.toHaveProperty('cookie');
  });

  it('that fails is a 401, never a redirect', async () => {
    const seen = await get('/app/x', { authorization: 'Bearer nope', accept: 'text/html' });
    expect(seen.status).toBe(401);
    expect(errorOf(seen)).toBe('invalid_token');
  });
});

describe('without a session', () => {
  const page = { accept: 'text/html,application/xhtml+xml', 'sec-fetch-mode': 'navigate' };

  it('a page load is sent to sign in, back to its path and query (302)', async () => {
    const seen = await get('/app/orders?id=7&x=a%20b', page);
    expect(seen.status).toBe(302);
    expect(seen.location).toBe(
      `/1/sign-in?return_to=${encodeURIComponent('/app/orders?id=7&x=a%20b')}`,
    );
    const line = await lineOf(s.lines, seen.headers.get('x-request-id'));
    expect(line).toMatchObject({ status: 302, outcome: 'refused', reason: 'invalid_token' });
  });

  it('anything else gets 401 invalid_token with its challenge', async () => {
    for (const [headers, method] of [
      [{ accept: 'application/json' }, 'GET'],
      [{}, 'GET'],
      [page, 'POST'],
    ] as const) {
      const seen = await get('/app/x', headers, method);
      expect(seen.status).toBe(401);
      expect(errorOf(seen)).toBe('invalid_token');
      expect(seen.headers.get('www-authenticate')).toMatch(/^Bearer /);
    }
  });

  it('an ended session: a page load signs in again, a fetch gets 401', async () => {
    const value = await signedIn();
    const sessionId = value.split('.')[0] as string;
    expect((await get('/app/x', { cookie: `${NAME}=${value}` })).status).toBe(200);
    expect(await s.gw.gateway.browserSessions.end(sessionId, 'sign_out')).toBe(true);
    const again = await get('/app/x', { ...page, cookie: `${NAME}=${value}` });
    expect(again.status).toBe(302);
    expect(again.location).toMatch(/^\/1\/sign-in\?return_to=/);
    const fetched = await get('/app/x', { cookie: `${NAME}=${value}` });
    expect(fetched.status).toBe(401);
  });

  it('two session cookies: 401, not a redirect (a sign-in would not remove the tossed one)', async () => {
    const value = await signedIn();
    const seen = await get('/app/x', { ...page, cookie: `${NAME}=${value}; ${NAME}=ses_x.y` });
    expect(seen.status).toBe(401);
  });

  it('forward-auth answers 401, naming the sign-in for a page load', async () => {
    const seen = await get('/auth/verify', {
      ...page,
      'x-original-uri': '/app/page?a=1',
      'x-original-method': 'GET',
    });
    expect(seen.status).toBe(401);
    expect(seen.headers.get('x-sign-in-location')).toBe(
      `/1/sign-in?return_to=${encodeURIComponent('/app/page?a=1')}`,
    );
  });
});

describe('the same-origin rule with the cookie', () => {
  it.each(['POST', 'PUT', 'PATCH', 'DELETE'])(
    '%s: same origin passes; cross-site, same-site or no header is 403 csrf_refused',
    async (method) => {
      const cookie = `${NAME}=${await signedIn()}`;
      const own = new URL(s.gw.url).origin;
      expect(
        (await get('/app/x', { cookie, 'sec-fetch-site': 'same-origin' }, method)).status,
      ).toBe(200);
      expect((await get('/app/x', { cookie, origin: own }, method)).status).toBe(200);
      const others: Record<string, string>[] = [
        { 'sec-fetch-site': 'cross-site' },
        { 'sec-fetch-site': 'same-site' },
        { origin: 'http://evil.test' },
        {},
      ];
      for (const headers of others) {
        const seen = await get('/app/x', { cookie, ...headers }, method);
        expect(seen.status, JSON.stringify(headers)).toBe(403);
        expect(errorOf(seen)).toBe('csrf_refused');
      }
    },
  );

  it('a bearer token is not held to it', async () => {
    const seen = await get(
      '/app/x',
      { authorization: bearer(s.token), 'sec-fetch-site': 'cross-site' },
      'POST',
    );
    expect(seen.status).toBe(200);
  });

  it('forward-auth: an unsafe original method from another site is 403 csrf_refused', async () => {
    const cookie = `${NAME}=${await signedIn()}`;
    const ask = (extra: Record<string, string>) =>
      get('/auth/verify', {
        cookie,
        'x-original-uri': '/app/x',
        'x-original-method': 'POST',
        'x-forwarded-host': 'app.test',
        ...extra,
      });
    expect((await ask({ 'sec-fetch-site': 'same-origin' })).status).toBe(200);
    const refused = await ask({ 'sec-fetch-site': 'cross-site' });
    expect(refused.status).toBe(403);
    expect(errorOf(refused)).toBe('csrf_refused');
  });
});

describe('an auth: bearer route', () => {
  it('never reads the cookie (401, not a redirect), and never forwards it', async () => {
    const value = await signedIn();
    const seen = await get('/api/x', { cookie: `${NAME}=${value}`, accept: 'text/html' });
    expect(seen.status).toBe(401);
    const admitted = await get('/api/x', {
      authorization: bearer(s.token),
      cookie: `${NAME}=${value}; keep=me`,
    });
    expect(admitted.status).toBe(200);
    expect(echoed(admitted).cookie).toBe('keep=me');
  });
});

describe("an upstream's Set-Cookie", () => {
  it("never sets the gateway's own cookies, in any spelling; the upstream's own pass", async () => {
    const seen = await get('/open/x', {});
    expect(seen.status).toBe(200);
    expect(seen.headers.getSetCookie()).toEqual(['app=1; Path=/']);
  });
});
